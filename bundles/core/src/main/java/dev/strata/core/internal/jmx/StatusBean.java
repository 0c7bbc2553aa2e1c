package dev.strata.core.internal.jmx;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanException;
import javax.management.MBeanInfo;
import javax.management.ReflectionException;

/**
 * A read-only MBean over a status map read on demand: each key an attribute, typed from its value
 * ({@code Long} for whole numbers, {@code Double} for decimals, {@code Boolean} for true/false,
 * otherwise {@code String}), so jconsole or a Prometheus JMX exporter read numbers as numbers.
 * The status keys of Strata's targets keep one kind of value each, so a key keeps its type.
 */
final class StatusBean implements DynamicMBean {
    private static final Pattern WHOLE = Pattern.compile("-?\\d{1,18}");
    private static final Pattern DECIMAL = Pattern.compile("-?\\d+\\.\\d+");
    private final String description;
    private final Supplier<Map<String, String>> source;

    StatusBean(String description, Supplier<Map<String, String>> source) {
        this.description = description;
        this.source = source;
    }

    static Object typed(String v) {
        if (v == null) {
            return "";
        }
        if (WHOLE.matcher(v).matches()) {
            return Long.valueOf(v);
        }
        if (DECIMAL.matcher(v).matches()) {
            return Double.valueOf(v);
        }
        if (v.equals("true") || v.equals("false")) {
            return Boolean.valueOf(v);
        }
        return v;
    }

    @Override
    public Object getAttribute(String attribute) throws AttributeNotFoundException {
        Map<String, String> s = source.get();
        if (!s.containsKey(attribute)) {
            throw new AttributeNotFoundException("no attribute '" + attribute + "'");
        }
        return typed(s.get(attribute));
    }

    @Override
    public AttributeList getAttributes(String[] attributes) {
        Map<String, String> s = source.get();
        AttributeList out = new AttributeList();
        for (String a : attributes) {
            if (s.containsKey(a)) {
                out.add(new Attribute(a, typed(s.get(a))));
            }
        }
        return out;
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        List<MBeanAttributeInfo> attrs = new ArrayList<>();
        for (Map.Entry<String, String> e : source.get().entrySet()) {
            attrs.add(new MBeanAttributeInfo(e.getKey(), typed(e.getValue()).getClass().getName(), e.getKey(),
                    true, false, false));
        }
        return new MBeanInfo(StatusBean.class.getName(), description, attrs.toArray(new MBeanAttributeInfo[0]),
                null, null, null);
    }

    @Override
    public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
        throw new AttributeNotFoundException("Strata's MBeans are read-only; change settings with dev:message or cache:set");
    }

    @Override
    public AttributeList setAttributes(AttributeList attributes) {
        return new AttributeList();
    }

    @Override
    public Object invoke(String actionName, Object[] params, String[] signature) throws MBeanException, ReflectionException {
        throw new ReflectionException(new NoSuchMethodException(actionName), "Strata's MBeans have no operations");
    }
}
