package dev.strata.core.internal.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.StringReader;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

import org.apache.felix.fileinstall.shaded.util.properties.TypedProperties;
import org.junit.jupiter.api.Test;

/**
 * {@link CfgFormat} against FileInstall 3.7.4's own reader ({@code TypedProperties}, shaded in its
 * jar): what core writes, FileInstall reads as the same strings; what a user writes, core parses as
 * FileInstall does; a rewrite keeps the user's comments and unchanged raw values.
 */
class CfgFormatTest {
    private static final UnaryOperator<String> NO_VARIABLES = v -> v;

    /** The file's keys and values as FileInstall reads a .cfg (its default encoding, ISO-8859-1: the text as is). */
    private static Map<String, String> fileInstallReads(String text) throws IOException {
        TypedProperties p = new TypedProperties();
        p.load(new StringReader(text));
        Map<String, String> m = new TreeMap<>();
        p.forEach((k, v) -> m.put(k, String.valueOf(v)));
        return m;
    }

    @Test
    void whatCoreWritesFileInstallReadsAsTheSameStrings() throws IOException {
        Map<String, String> props = new LinkedHashMap<>();
        props.put("name", "backing0");
        props.put("type", "file");
        props.put("arg.path", "/srv/images/é日本/😀/x y.img");
        props.put("arg.odd", "a=b:c#d!e\\f\tg");
        props.put("arg.lead", "  two leading blanks");
        props.put("arg.empty", "");
        props.put("arg.line", "first\nsecond\r\n");
        props.put("arg.long", "/very/long/" + "directory/".repeat(900) + "end");
        props.put("key with=odd:chars", "v");
        props.put("#notacomment", "v2");
        String text = CfgFormat.render("", CfgFormat.ordered(props), NO_VARIABLES);
        for (char c : text.toCharArray()) {
            assertEquals(true, c == '\n' || c >= 0x20 && c <= 0x7e, "ASCII only, whatever FileInstall's encoding: " + (int) c);
        }
        assertEquals(new TreeMap<>(props), fileInstallReads(text));
        assertEquals(new TreeMap<>(props), new TreeMap<>(CfgFormat.parse(text)));
    }

    @Test
    void whatAUserWritesCoreParsesAsFileInstallDoes() throws IOException {
        String text = "# comment\n! another\n\n   name:backing0\ntype   file\narg.path = /a/very/long/\\\n    continued/path.img\n"
                + "arg.size=1M   \narg.esc=\\u00e9\\t\\\\x\narg.noeol=last";
        assertEquals(fileInstallReads(text), new TreeMap<>(CfgFormat.parse(text)));
    }

    @Test
    void aRewriteKeepsCommentsAndUnchangedRawValuesAndReplacesOnlyWhatChanged() throws IOException {
        String text = "# the slow device\nname = backing0\ntype = file\n# where it lives\narg.path = ${strata.home}/var/b.img\n"
                + "arg.size = 4G\narg.create = true\n";
        UnaryOperator<String> vars = v -> v.replace("${strata.home}", "/opt/strata");
        Map<String, String> next = new LinkedHashMap<>();
        next.put("name", "backing0");
        next.put("type", "file");
        next.put("arg.path", "/opt/strata/var/b.img"); // unchanged once substituted: stays ${strata.home}
        next.put("arg.size", "8G"); // changed: written in its place
        next.put("id", "5b0e3c52-0000-4000-8000-000000000001"); // new: appended
        // arg.create removed: its line goes
        String out = CfgFormat.render(text, CfgFormat.ordered(next), vars);
        assertEquals("# the slow device\nname = backing0\ntype = file\n# where it lives\narg.path = ${strata.home}/var/b.img\n"
                + "arg.size = 8G\nid = 5b0e3c52-0000-4000-8000-000000000001\n", out);
        assertEquals(out, CfgFormat.render(out, CfgFormat.ordered(next), vars), "nothing changed: the same text");
    }

    @Test
    void aFileWithoutAFinalLineEndGetsOneBeforeAnAppendedKey() {
        assertEquals("name=x\nid = 1\n", CfgFormat.render("name=x", CfgFormat.ordered(Map.of("name", "x", "id", "1")), NO_VARIABLES));
    }
}
