import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;

/** The report's charts (Java2D, headless): horizontal bars per system, lines by block size. */
final class Charts {
    private Charts() {
    }

    interface Value { double of(Report.Cell c); }

    static Color colorOf(String system) {
        String base = system.contains(" ") ? system.substring(0, system.indexOf(' ')) : system;
        return Report.COLORS.getOrDefault(base, new Color(0x7f7f7f));
    }

    static Graphics2D canvas(BufferedImage im) {
        Graphics2D g = im.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, im.getWidth(), im.getHeight());
        return g;
    }

    /** Horizontal bars, one per system, value labels, the reference hatched by a line. */
    static void barChart(Path out, String title, String axis, List<Report.Cell> cs, Value v, String reference) throws IOException {
        List<Report.Cell> shown = new ArrayList<>();
        for (Report.Cell c : cs) if ((c.n() > 0 && !Double.isNaN(v.of(c))) || !c.note().isEmpty()) shown.add(c);
        int rowH = 28, left = 190, right = 150, top = 56, bottom = 44;
        int w = 900, h = top + bottom + Math.max(1, shown.size()) * rowH;
        BufferedImage im = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(im);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.setColor(Color.BLACK);
        g.drawString(title, 12, 24);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.setColor(Color.DARK_GRAY);
        g.drawString(axis + "; median of the repetitions", 12, 42);
        double max = 0;
        for (Report.Cell c : shown) if (c.n() > 0 && !Double.isNaN(v.of(c))) max = Math.max(max, v.of(c));
        if (max <= 0) max = 1;
        int plotW = w - left - right;
        FontMetrics fm = g.getFontMetrics();
        for (int i = 0; i < shown.size(); i++) {
            Report.Cell c = shown.get(i);
            int y = top + i * rowH;
            if (c.n() == 0 || Double.isNaN(v.of(c))) {
                g.setColor(Color.BLACK);
                g.drawString(c.system(), left - 8 - fm.stringWidth(c.system()), y + rowH / 2 + 5);
                g.setColor(Color.GRAY);
                g.drawString("n/a: " + Report.shortNote(c.note()), left + 6, y + rowH / 2 + 5);
                continue;
            }
            int bw = (int) Math.round(plotW * v.of(c) / max);
            g.setColor(colorOf(c.system()));
            g.fillRect(left, y + 4, Math.max(1, bw), rowH - 8);
            if (c.system().equals(reference)) {
                g.setColor(Color.BLACK);
                g.setStroke(new BasicStroke(2f));
                g.drawRect(left, y + 4, Math.max(1, bw), rowH - 8);
            }
            g.setColor(Color.BLACK);
            String name = c.system() + (c.system().equals(reference) ? " (ref)" : "");
            g.drawString(name, left - 8 - fm.stringWidth(name), y + rowH / 2 + 5);
            g.drawString(Report.f(v.of(c)), left + bw + 6, y + rowH / 2 + 5);
        }
        g.setColor(Color.GRAY);
        g.drawLine(left, top, left, top + shown.size() * rowH);
        g.dispose();
        ImageIO.write(im, "png", out.toFile());
    }

    /** MiB/s by block size, one line per system, logarithmic y. */
    static void lineChart(Path out, String title, List<String> xs, Map<String, double[]> series) throws IOException {
        int w = 900, h = 480, left = 80, right = 180, top = 56, bottom = 50;
        BufferedImage im = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(im);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.setColor(Color.BLACK);
        g.drawString(title, 12, 24);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.setColor(Color.DARK_GRAY);
        g.drawString("MiB/s (log scale, higher is better) by block size; median of the repetitions", 12, 42);
        double lo = Double.MAX_VALUE, hi = 0;
        for (double[] ys : series.values()) for (double y : ys) if (!Double.isNaN(y) && y > 0) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
        if (hi <= 0) { lo = 1; hi = 10; }
        double l0 = Math.floor(Math.log10(lo)), l1 = Math.ceil(Math.log10(hi));
        if (l1 <= l0) l1 = l0 + 1;
        int pw = w - left - right, ph = h - top - bottom;
        g.setColor(new Color(0xdddddd));
        for (double d = l0; d <= l1; d++) {
            int y = top + ph - (int) Math.round(ph * (d - l0) / (l1 - l0));
            g.drawLine(left, y, left + pw, y);
            g.setColor(Color.DARK_GRAY);
            g.drawString(Report.f(Math.pow(10, d)), 10, y + 4);
            g.setColor(new Color(0xdddddd));
        }
        g.setColor(Color.DARK_GRAY);
        for (int i = 0; i < xs.size(); i++) {
            int x = left + (xs.size() == 1 ? pw / 2 : i * pw / (xs.size() - 1));
            g.drawString(xs.get(i), x - 10, top + ph + 20);
        }
        int li = 0;
        for (Map.Entry<String, double[]> e : series.entrySet()) {
            g.setColor(colorOf(e.getKey()));
            g.setStroke(new BasicStroke(e.getKey().startsWith("strata") ? 3f : 2f));
            int px = -1, py = -1;
            double[] ys = e.getValue();
            for (int i = 0; i < ys.length; i++) {
                if (Double.isNaN(ys[i]) || ys[i] <= 0) { px = -1; continue; }
                int x = left + (xs.size() == 1 ? pw / 2 : i * pw / (xs.size() - 1));
                int y = top + ph - (int) Math.round(ph * (Math.log10(ys[i]) - l0) / (l1 - l0));
                g.fillOval(x - 4, y - 4, 8, 8);
                if (px >= 0) g.drawLine(px, py, x, y);
                px = x; py = y;
            }
            int ly = top + 10 + li++ * 20;
            g.fillRect(left + pw + 16, ly - 8, 14, 10);
            g.setColor(Color.BLACK);
            g.drawString(e.getKey(), left + pw + 36, ly + 2);
        }
        g.dispose();
        ImageIO.write(im, "png", out.toFile());
    }
}
