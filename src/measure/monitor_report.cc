// The monitor's outputs: the time series as CSV and SVG, the summary as text and JSON.
#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "cloudfit/monitor.h"
#include "cloudfit/table.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

std::string Cell(double v, int digits) { return FormatNumber(v, digits); }
std::string Cell(const std::optional<double>& v, int digits) {
  return v ? FormatNumber(*v, digits) : "";
}

std::string CsvQuote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CommandLine(const MonitorRecording& rec) {
  if (rec.command.empty()) return fmt::format("pid {}", rec.pid);
  return Join(rec.command, " ");
}

size_t GpuColumns(const MonitorRecording& rec) {
  size_t n = 0;
  for (const MonitorSample& s : rec.samples) n = std::max(n, s.gpus.size());
  return n;
}

// A step of 1, 2 or 5 times a power of ten that cuts `span` into about `parts` pieces.
double NiceStep(double span, int parts) {
  double raw = span / parts;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * power) return m * power;
  }
  return 10 * power;
}

}  // namespace

std::string MonitorCsv(const MonitorRecording& rec) {
  size_t gpus = GpuColumns(rec);
  std::string out =
      "time_s,processes,cpu_percent,cpu_share_percent,rss_bytes,read_bytes_per_s,"
      "write_bytes_per_s,system_memory_used_bytes,system_memory_total_bytes";
  for (size_t i = 0; i < gpus; ++i) {
    out += fmt::format(
        ",gpu{0}_name,gpu{0}_util_percent,gpu{0}_memory_used_bytes,gpu{0}_memory_total_bytes,"
        "gpu{0}_power_w,gpu{0}_sm_clock_mhz,gpu{0}_memory_clock_mhz",
        i);
  }
  out += "\n";
  for (const MonitorSample& s : rec.samples) {
    out += fmt::format("{},{},{},{},{},{},{},{},{}", Cell(s.time_seconds, 3), s.processes,
                       Cell(s.cpu_percent, 2), Cell(s.cpu_share_percent, 2),
                       Cell(s.rss_bytes, 0), Cell(s.read_bytes_per_s, 0),
                       Cell(s.write_bytes_per_s, 0), Cell(s.system_memory_used_bytes, 0),
                       Cell(s.system_memory_total_bytes, 0));
    for (size_t i = 0; i < gpus; ++i) {
      if (i >= s.gpus.size()) {
        out += ",,,,,,,";
        continue;
      }
      const GpuSample& g = s.gpus[i];
      out += fmt::format(",{},{},{},{},{},{},{}", CsvQuote(g.name),
                         Cell(g.utilization_percent, 2), Cell(g.memory_used_bytes, 0),
                         Cell(g.memory_total_bytes, 0), Cell(g.power_watts, 1),
                         Cell(g.sm_clock_mhz, 0), Cell(g.memory_clock_mhz, 0));
    }
    out += "\n";
  }
  return out;
}

std::string MonitorSvg(const MonitorRecording& rec) {
  const int width = 900, height = 440;
  const int left = 60, right = 20, top = 40, bottom = 90;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      width, height);
  svg += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"14\">{}</text>\n", left,
                     XmlEscape("cloudfit monitor: " + CommandLine(rec)));

  double t_max = rec.interval_seconds;
  for (const MonitorSample& s : rec.samples) t_max = std::max(t_max, s.time_seconds);
  auto x = [&](double t) { return left + plot_w * t / t_max; };
  auto y = [&](double pct) { return top + plot_h * (1 - std::clamp(pct, 0.0, 100.0) / 100); };

  // Grid and axes: percent on y, seconds on x.
  for (int p = 0; p <= 100; p += 25) {
    svg += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#dddddd\"/>\n"
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}%</text>\n",
        left, y(p), width - right, y(p), left - 6, y(p) + 4, p);
  }
  double step = NiceStep(t_max, 8);
  for (double t = 0; t <= t_max * 1.0001; t += step) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"black\"/>\n"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        x(t), top + plot_h, top + plot_h + 5, top + plot_h + 18, FormatNumber(t, 2));
  }
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"black\"/>\n"
      "<text x=\"{4:.1f}\" y=\"{5}\" text-anchor=\"middle\">time (s)</text>\n",
      left, top, top + plot_h, width - right, left + plot_w / 2, top + plot_h + 34);

  struct Series {
    const char* name;
    const char* color;
    std::function<std::optional<double>(const MonitorSample&)> value;
  };
  auto gpu_mean = [](const MonitorSample& s, bool memory) -> std::optional<double> {
    if (s.gpus.empty()) return std::nullopt;
    double sum = 0;
    for (const GpuSample& g : s.gpus) {
      sum += memory ? (g.memory_total_bytes > 0 ? 100 * g.memory_used_bytes / g.memory_total_bytes
                                                : 0)
                    : g.utilization_percent;
    }
    return sum / s.gpus.size();
  };
  std::vector<Series> series = {
      {"GPU utilisation %", "#1b9e77", [&](const MonitorSample& s) { return gpu_mean(s, false); }},
      {"GPU memory used %", "#d95f02", [&](const MonitorSample& s) { return gpu_mean(s, true); }},
      {"CPU % of all cores", "#7570b3",
       [](const MonitorSample& s) -> std::optional<double> { return s.cpu_share_percent; }},
      {"system memory used %", "#e7298a", [](const MonitorSample& s) -> std::optional<double> {
         if (s.system_memory_total_bytes <= 0) return std::nullopt;
         return 100 * s.system_memory_used_bytes / s.system_memory_total_bytes;
       }}};

  int legend_x = left;
  for (const Series& line : series) {
    std::string points;
    for (const MonitorSample& s : rec.samples) {
      std::optional<double> v = line.value(s);
      if (!v) continue;
      if (!points.empty()) points += ' ';
      points += fmt::format("{:.1f},{:.1f}", x(s.time_seconds), y(*v));
    }
    bool present = !points.empty();
    if (present) {
      svg += fmt::format(
          "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", points,
          line.color);
    }
    std::string label = line.name;
    if (!present) label += " (none)";
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"4\" fill=\"{}\"/>\n"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        legend_x, height - 34, line.color, legend_x + 18, height - 29, XmlEscape(label));
    legend_x += 210;
  }
  if (rec.samples.empty()) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\">No samples.</text>\n", left + 20, top + 30);
  }
  if (!rec.gpu_unavailable.empty()) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#666666\">{}</text>\n", left,
                       height - 10, XmlEscape("no GPU series: " + rec.gpu_unavailable));
  }
  return svg + "</svg>\n";
}

std::string MonitorText(const MonitorRecording& rec, const MonitorSummary& m,
                        const std::vector<Advice>& advice) {
  std::string out = fmt::format("monitor: {} ({} s, {} samples every {} s", CommandLine(rec),
                                FormatNumber(m.duration_seconds, 1), m.samples,
                                FormatNumberShort(rec.interval_seconds));
  if (rec.exit_code) out += fmt::format(", exit code {}", *rec.exit_code);
  if (!rec.stopped_by.empty() && rec.stopped_by != "exit") {
    out += ", stopped by " + rec.stopped_by;
  }
  out += fmt::format(")\n{} cores; ", m.cpu_cores);
  if (m.gpu_count > 0) {
    out += fmt::format("{} x {}, {} GiB each\n", m.gpu_count, m.gpu_name,
                       FormatNumber(m.gpu_memory_total_bytes / (1024.0 * 1024 * 1024), 1));
  } else {
    out += "no GPU: " + rec.gpu_unavailable + "\n";
  }
  Table table({{"series", "series"},
               {"unit", "unit"},
               {"mean", "mean", true},
               {"p95", "p95", true},
               {"max", "max", true}});
  // Small figures (a few MB/s, a fraction of a GiB) keep three significant digits, so the
  // 1.5 MB a shell holds is 0.00142 GiB and not 0.
  auto number = [](double v) {
    if (v != 0 && std::fabs(v) < 1) return fmt::format("{:.3g}", v);
    return FormatNumber(v, std::fabs(v) < 10 ? 2 : 1);
  };
  for (const SeriesStats& s : m.series) {
    table.AddRow({s.title, s.unit, number(s.mean), number(s.p95), number(s.max)});
  }
  if (table.size() > 0) out += table.Render(OutputFormat::kTable);
  out += "advice:\n";
  for (const Advice& a : advice) {
    out += fmt::format("  [{}] {}\n", a.severity, a.message);
  }
  return out;
}

nlohmann::json MonitorJson(const MonitorRecording& rec, const MonitorSummary& m,
                           const std::vector<Advice>& advice) {
  using nlohmann::json;
  json doc = {{"schema", "cloudfit.monitor/v1"},
              {"command", rec.command},
              {"pid", rec.pid},
              {"interval_s", rec.interval_seconds},
              {"duration_s", m.duration_seconds},
              {"samples", m.samples},
              {"cpu_cores", m.cpu_cores},
              {"exit_code", rec.exit_code ? json(*rec.exit_code) : json(nullptr)},
              {"stopped_by", rec.stopped_by}};
  if (m.gpu_count > 0) {
    doc["gpu"] = {{"count", m.gpu_count},
                  {"name", m.gpu_name},
                  {"memory_total_gib", m.gpu_memory_total_bytes / (1024.0 * 1024 * 1024)},
                  {"peak_memory_used_gib", m.peak_gpu_memory_used_bytes / (1024.0 * 1024 * 1024)}};
    doc["gpu_unavailable"] = nullptr;
  } else {
    doc["gpu"] = nullptr;
    doc["gpu_unavailable"] = rec.gpu_unavailable;
  }
  json series = json::array();
  for (const SeriesStats& s : m.series) {
    series.push_back({{"key", s.key},
                      {"title", s.title},
                      {"unit", s.unit},
                      {"count", s.count},
                      {"mean", s.mean},
                      {"p95", s.p95},
                      {"max", s.max}});
  }
  doc["series"] = series;
  json items = json::array();
  for (const Advice& a : advice) {
    items.push_back({{"code", a.code},
                     {"severity", a.severity},
                     {"message", a.message},
                     {"suggested_instance", a.suggested_instance.empty()
                                                ? json(nullptr)
                                                : json(a.suggested_instance)},
                     {"suggested_provider", a.suggested_provider.empty()
                                                ? json(nullptr)
                                                : json(a.suggested_provider)},
                     {"suggested_price_per_hour_usd", a.suggested_price_per_hour
                                                          ? json(*a.suggested_price_per_hour)
                                                          : json(nullptr)}});
  }
  doc["advice"] = items;
  return doc;
}

}  // namespace cloudfit
