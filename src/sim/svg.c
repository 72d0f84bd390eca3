/* svg.c - line charts of the simulator's time series as hand-written SVG.
 *
 * Panels are stacked vertically over one time axis; each has its own y
 * axis ("%" panels run 0-100 from fractions, others scale to their
 * largest value), grid lines, and a legend at its right.  No scripts, no
 * external fonts: any browser or image viewer shows the file. */
#include "common/compat.h"

#include <math.h>

#include "sim/sim-internal.h"

#define WIDTH 980
#define LEFT 70
#define RIGHT 190
#define TOP 70
#define PANEL_H 210
#define GAP 56
#define BOTTOM 44
#define MAX_POINTS 4000

static void escape(struct buf *b, const char *s)
{
        for (; *s; s++) {
                switch (*s) {
                case '&': buf_puts(b, "&amp;"); break;
                case '<': buf_puts(b, "&lt;"); break;
                case '>': buf_puts(b, "&gt;"); break;
                case '"': buf_puts(b, "&quot;"); break;
                default: buf_putc(b, *s);
                }
        }
}

static double value_of(const struct sim_sample *s, int field)
{
        switch (field) {
        case SIM_SERIES_GPU_UTIL: return s->gpu_util;
        case SIM_SERIES_GPU_ALLOC: return s->gpu_alloc;
        case SIM_SERIES_CPU_UTIL: return s->cpu_util;
        case SIM_SERIES_QUEUE: return (double)s->queue;
        case SIM_SERIES_FRAG: return s->frag;
        }
        return 0;
}

/* A step of 1, 2 or 5 times a power of ten giving about `n` ticks over span. */
static double nice_step(double span, int n)
{
        if (span <= 0)
                return 1;
        double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
        return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/* The unit of the time axis for a span in seconds. */
static void time_unit(double span, double *ret_div, const char **ret_name)
{
        if (span >= 3 * 86400) {
                *ret_div = 86400, *ret_name = "days";
        } else if (span >= 3 * 3600) {
                *ret_div = 3600, *ret_name = "hours";
        } else if (span >= 180) {
                *ret_div = 60, *ret_name = "minutes";
        } else {
                *ret_div = 1, *ret_name = "seconds";
        }
}

static void panel(struct buf *b, const struct sim_panel *p, int top, double tmax, double tdiv, bool last,
                  const char *tname)
{
        int plot_w = WIDTH - LEFT - RIGHT;
        bool pct = p->unit && streq(p->unit, "%");
        double ymax = pct ? 100 : 0;

        if (!pct) {
                for (int s = 0; s < p->nseries; s++)
                        for (size_t i = 0; i < p->series[s].n; i++)
                                ymax = fmax(ymax, value_of(&p->series[s].s[i], p->series[s].field));
                double step = nice_step(ymax > 0 ? ymax : 1, 4);
                ymax = ceil((ymax > 0 ? ymax : 1) / step) * step;
        }
        double ystep = pct ? 25 : nice_step(ymax, 4);

        buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"h\">", LEFT, top - 10);
        escape(b, p->title);
        buf_puts(b, "</text>\n");
        buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", LEFT, top, plot_w,
                   PANEL_H);
        for (double y = 0; y <= ymax + ystep / 1000; y += ystep) {
                double py = top + PANEL_H - y / ymax * PANEL_H;
                buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>\n", LEFT,
                           LEFT + plot_w, py, py);
                buf_printf(b, "<text x=\"%d\" y=\"%.1f\" class=\"yl\">%g%s</text>\n", LEFT - 6, py + 4, y,
                           pct ? "%" : "");
        }
        double tstep = nice_step(tmax / tdiv, 8);
        for (double t = 0; t <= tmax / tdiv + tstep / 1000; t += tstep) {
                double px = LEFT + (tmax > 0 ? t * tdiv / tmax : 0) * plot_w;
                buf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"grid\"/>\n", px, px, top,
                           top + PANEL_H);
                if (last)
                        buf_printf(b, "<text x=\"%.1f\" y=\"%d\" class=\"xl\">%g</text>\n", px, top + PANEL_H + 16, t);
        }
        if (last)
                buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"xl\">time (%s)</text>\n", LEFT + plot_w / 2,
                           top + PANEL_H + 34, tname);
        for (int s = 0; s < p->nseries; s++) {
                const struct sim_series *se = &p->series[s];
                size_t stride = se->n / MAX_POINTS + 1;
                const char *dash = se->field == SIM_SERIES_GPU_ALLOC ? " stroke-dasharray=\"6,3\"" : "";
                buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"", se->color,
                           dash);
                for (size_t i = 0; i < se->n; i += stride) {
                        double v = value_of(&se->s[i], se->field) * (pct ? 100 : 1);
                        double px = LEFT + (tmax > 0 ? (double)se->s[i].t / 1e6 / tmax : 0) * plot_w;
                        double py = top + PANEL_H - fmin(v, ymax) / ymax * PANEL_H;
                        buf_printf(b, "%s%.1f,%.1f", i ? " " : "", px, py);
                }
                buf_puts(b, "\"/>\n");
                int ly = top + 14 + s * 18;
                buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"%s/>\n",
                           LEFT + plot_w + 12, LEFT + plot_w + 30, ly - 4, ly - 4, se->color, dash);
                buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"lg\">", LEFT + plot_w + 36, ly);
                escape(b, se->label);
                buf_puts(b, "</text>\n");
        }
}

void sim_svg_chart(struct buf *out, const char *title, const struct sim_panel *panels, int npanels)
{
        int height = TOP + npanels * PANEL_H + (npanels - 1) * GAP + BOTTOM;
        double tmax = 0, tdiv;
        const char *tname;

        for (int p = 0; p < npanels; p++)
                for (int s = 0; s < panels[p].nseries; s++)
                        for (size_t i = 0; i < panels[p].series[s].n; i++)
                                tmax = fmax(tmax, (double)panels[p].series[s].s[i].t / 1e6);
        time_unit(tmax, &tdiv, &tname);
        buf_printf(out,
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
                   "<style>text{font-family:sans-serif;font-size:12px;fill:#222}"
                   ".t{font-size:15px;font-weight:bold}.h{font-size:13px;font-weight:bold}"
                   ".yl{text-anchor:end}.xl{text-anchor:middle}.frame{fill:#fff;stroke:#888}"
                   ".grid{stroke:#ddd;stroke-width:1}</style>\n"
                   "<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
                   "<text x=\"%d\" y=\"22\" class=\"t\">",
                   WIDTH, height, WIDTH, height, LEFT);
        escape(out, title);
        buf_puts(out, "</text>\n");
        for (int p = 0; p < npanels; p++)
                panel(out, &panels[p], TOP + p * (PANEL_H + GAP), tmax, tdiv, p == npanels - 1, tname);
        buf_puts(out, "</svg>\n");
}
