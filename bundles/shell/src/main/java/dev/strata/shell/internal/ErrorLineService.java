package dev.strata.shell.internal;

import java.util.List;
import java.util.function.BiFunction;

import org.apache.felix.service.command.CommandSession;
import org.osgi.service.component.annotations.Component;

/**
 * {@link ErrorLines} for {@code bin/strata -c} and {@code --daemon -c}: the launcher runs outside
 * the framework and cannot link against this bundle, so it finds this service by its property
 * {@value #PROPERTY} under a JDK interface and calls
 * {@code apply(error, List.of(statement, session))}; the answer is the one line to print. The
 * console and scripts so describe a failure in the same place.
 */
@Component(service = BiFunction.class, property = ErrorLineService.PROPERTY + "=true")
public final class ErrorLineService implements BiFunction<Throwable, List<?>, String> {

    static final String PROPERTY = "strata.error.line";

    @Override
    public String apply(Throwable error, List<?> context) {
        String statement = context.isEmpty() ? null : String.valueOf(context.get(0));
        CommandSession session = context.size() > 1 && context.get(1) instanceof CommandSession s ? s : null;
        String line = ErrorLines.describe(error, statement, session);
        // no 'e' outside the console: the statement is what to report
        return line.replace(ErrorLines.NO_MESSAGE, "failed without a message (a bug: please report the command)");
    }
}
