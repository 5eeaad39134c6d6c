// server/metrics.cpp — see metrics.h.
#include "server/metrics.h"

#include <cmath>
#include <cstdio>
#include <string_view>

namespace skillbox::server {
namespace {

/// Every Outcome, ok (0) to cancelled (the last).
constexpr size_t kOutcomes = static_cast<size_t>(Outcome::cancelled) + 1;
constexpr std::array<ShedReason, 5> kShedReasons = {ShedReason::tenant_queue_full, ShedReason::server_busy,
                                                    ShedReason::draining, ShedReason::runs_per_minute,
                                                    ShedReason::cpu_seconds_per_minute};

/// Bucket bounds in seconds: from a trivial in-process run (a few ms) to the longest timeout a
/// manifest may ask for.
constexpr std::array<double, 14> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                             1,     2.5,  5,     10,   30,  60,   300};

std::string_view reason_name(ShedReason r) {
  switch (r) {
    case ShedReason::tenant_queue_full:
      return "tenant_queue_full";
    case ShedReason::server_busy:
      return "server_busy";
    case ShedReason::draining:
      return "draining";
    case ShedReason::runs_per_minute:
      return "runs_per_minute";
    case ShedReason::cpu_seconds_per_minute:
      return "cpu_seconds_per_minute";
  }
  return "unknown";
}

/// A label value as the exposition format wants it: backslash, double quote and newline escaped.
std::string label_value(std::string_view v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

/// A sample value: integers as integers, others with enough digits to round-trip.
std::string number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char buf[32];
  (void)std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// A cumulative histogram; observe() and read() from any thread (each bucket is its own atomic, so a
/// scrape may see one observation in some buckets and not yet in others: Prometheus tolerates it).
struct Histogram {
  std::array<std::atomic<uint64_t>, kBuckets.size()> buckets{};  // observations <= kBuckets[i]
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> sum_us{0};  // microseconds, so the sum stays an integer atomic

  void observe(double seconds) {
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      if (seconds <= kBuckets[i]) ++buckets[i];
    }
    ++count;
    sum_us += static_cast<uint64_t>(std::max(seconds, 0.0) * 1e6);
  }

  void write(std::string& out, const std::string& name, const std::string& labels) const {
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      out.append(name).append("_bucket{").append(labels).append(",le=\"").append(number(kBuckets[i]));
      out.append("\"} ").append(std::to_string(buckets[i].load())).append("\n");
    }
    const uint64_t n = count.load();
    out += name + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(n) + "\n";
    out += name + "_sum{" + labels + "} " + number(static_cast<double>(sum_us.load()) / 1e6) + "\n";
    out += name + "_count{" + labels + "} " + std::to_string(n) + "\n";
  }
};

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP " + std::string(name) + " " + std::string(help) + "\n";
  out += "# TYPE " + std::string(name) + " " + std::string(type) + "\n";
}

}  // namespace

struct Metrics::Tenant {
  std::string label;  // `tenant="NAME"`
  std::array<std::atomic<uint64_t>, kOutcomes> runs{};
  std::array<std::atomic<uint64_t>, kShedReasons.size()> shed{};
  std::atomic<uint64_t> crashes{0};
  std::atomic<int64_t> mcp_sessions{0};
  std::atomic<uint64_t> mcp_calls{0};
  Histogram duration;
  Histogram wait;
};

Metrics::Metrics(const std::vector<std::string>& tenants) {
  for (const std::string& name : tenants) add_tenant(name);
}

size_t Metrics::add_tenant(const std::string& name) {
  auto t = std::make_unique<Tenant>();
  t->label = "tenant=\"" + label_value(name) + "\"";
  base::MutexLock lock(mu_);
  tenants_.push_back(std::move(t));
  return tenants_.size() - 1;
}

Metrics::Tenant& Metrics::at(size_t tenant) const {
  base::MutexLock lock(mu_);
  return *tenants_.at(tenant);  // a Tenant never moves: the list holds pointers, and only grows
}

Metrics::~Metrics() = default;

void Metrics::run_ended(size_t tenant, Outcome outcome, bool ran, double seconds) {
  Tenant& t = at(tenant);
  ++t.runs.at(static_cast<size_t>(outcome));
  if (outcome == Outcome::crashed) ++t.crashes;
  if (ran) t.duration.observe(seconds);
}

void Metrics::queue_waited(size_t tenant, double seconds) {
  at(tenant).wait.observe(seconds);
}

void Metrics::shed(size_t tenant, ShedReason reason) {
  ++at(tenant).shed.at(static_cast<size_t>(reason));
}

void Metrics::mcp_sessions(size_t tenant, int delta) {
  at(tenant).mcp_sessions += delta;
}

void Metrics::mcp_call(size_t tenant) {
  ++at(tenant).mcp_calls;
}

std::string Metrics::render(const std::vector<RunQueue::LaneCounts>& counts) const {
  base::MutexLock lock(mu_);
  std::string out;
  family(out, "skillbox_runs_total", "counter", "Runs that ended, by tenant and outcome.");
  for (const auto& t : tenants_) {
    for (size_t o = 0; o < kOutcomes; ++o) {
      out += "skillbox_runs_total{" + t->label + ",outcome=\"" +
             std::string(to_string(static_cast<Outcome>(o))) + "\"} " + std::to_string(t->runs[o].load()) +
             "\n";
    }
  }
  family(out, "skillbox_run_duration_seconds", "histogram", "Time runs took on a run thread.");
  for (const auto& t : tenants_) t->duration.write(out, "skillbox_run_duration_seconds", t->label);
  family(out, "skillbox_queue_wait_seconds", "histogram",
         "Time requests waited in their tenant's queue before a run thread took them.");
  for (const auto& t : tenants_) t->wait.write(out, "skillbox_queue_wait_seconds", t->label);
  family(out, "skillbox_runs_in_flight", "gauge", "Requests on a run thread now.");
  for (size_t i = 0; i < tenants_.size(); ++i) {
    out += "skillbox_runs_in_flight{" + tenants_[i]->label + "} " +
           std::to_string(i < counts.size() ? counts[i].running : 0) + "\n";
  }
  family(out, "skillbox_runs_queued", "gauge", "Requests waiting for a run thread now.");
  for (size_t i = 0; i < tenants_.size(); ++i) {
    out += "skillbox_runs_queued{" + tenants_[i]->label + "} " +
           std::to_string(i < counts.size() ? counts[i].queued : 0) + "\n";
  }
  family(out, "skillbox_requests_shed_total", "counter", "Requests refused at admission, by reason.");
  for (const auto& t : tenants_) {
    for (size_t r = 0; r < kShedReasons.size(); ++r) {
      out += "skillbox_requests_shed_total{" + t->label + ",reason=\"" +
             std::string(reason_name(kShedReasons[r])) + "\"} " + std::to_string(t->shed[r].load()) + "\n";
    }
  }
  family(out, "skillbox_worker_crashes_total", "counter",
         "Runs whose worker process died (outcome crashed).");
  for (const auto& t : tenants_) {
    out += "skillbox_worker_crashes_total{" + t->label + "} " + std::to_string(t->crashes.load()) + "\n";
  }
  family(out, "skillbox_mcp_sessions", "gauge", "MCP sessions open on /mcp now.");
  for (const auto& t : tenants_) {
    out += "skillbox_mcp_sessions{" + t->label + "} " + std::to_string(t->mcp_sessions.load()) + "\n";
  }
  family(out, "skillbox_mcp_calls_total", "counter", "MCP tools/call runs started.");
  for (const auto& t : tenants_) {
    out += "skillbox_mcp_calls_total{" + t->label + "} " + std::to_string(t->mcp_calls.load()) + "\n";
  }
  return out;
}

}  // namespace skillbox::server
