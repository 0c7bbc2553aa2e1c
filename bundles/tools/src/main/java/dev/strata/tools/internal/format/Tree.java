package dev.strata.tools.internal.format;

import java.util.List;
import java.util.Map;

/** Renders a dump (maps, lists, strings, numbers) as indented text or as JSON: one tree, two views. */
public final class Tree {
    private Tree() {
    }

    public static String text(Map<String, Object> m) {
        StringBuilder sb = new StringBuilder();
        text(sb, m, "");
        return sb.toString();
    }

    @SuppressWarnings("unchecked")
    private static void text(StringBuilder sb, Map<String, Object> m, String indent) {
        for (Map.Entry<String, Object> e : m.entrySet()) {
            Object v = e.getValue();
            if (v instanceof Map<?, ?> sub) {
                sb.append(indent).append(e.getKey()).append(":\n");
                text(sb, (Map<String, Object>) sub, indent + "  ");
            } else if (v instanceof List<?> list) {
                sb.append(indent).append(e.getKey()).append(": ").append(list.size()).append('\n');
                for (Object o : list) {
                    sb.append(indent).append("  ");
                    if (o instanceof Map<?, ?> om) {
                        StringBuilder line = new StringBuilder();
                        for (Map.Entry<?, ?> x : om.entrySet()) {
                            line.append(line.length() == 0 ? "" : " ").append(x.getKey()).append('=').append(x.getValue());
                        }
                        sb.append(line);
                    } else {
                        sb.append(o);
                    }
                    sb.append('\n');
                }
            } else {
                sb.append(indent).append(e.getKey()).append(": ").append(v).append('\n');
            }
        }
    }

    public static String json(Object o) {
        StringBuilder sb = new StringBuilder();
        json(sb, o);
        return sb.toString();
    }

    private static void json(StringBuilder sb, Object o) {
        if (o instanceof Map<?, ?> m) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                sb.append(first ? "" : ",");
                first = false;
                string(sb, String.valueOf(e.getKey()));
                sb.append(':');
                json(sb, e.getValue());
            }
            sb.append('}');
        } else if (o instanceof List<?> l) {
            sb.append('[');
            for (int i = 0; i < l.size(); i++) {
                sb.append(i == 0 ? "" : ",");
                json(sb, l.get(i));
            }
            sb.append(']');
        } else if (o instanceof Number || o instanceof Boolean) {
            sb.append(o);
        } else {
            string(sb, String.valueOf(o));
        }
    }

    private static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
