#include "runner/live_run.h"

#include <variant>

#include "base/escape.h"

namespace skillbox::runner {

void LiveRun::log(const LogEntry& entry) {
  base::MutexLock lock(mutex_);
  logs_.push_back(entry);
  if (!open_ || !observer_.on_log) return;
  try {
    observer_.on_log(entry, Timestamp::clock::now());
  } catch (...) {  // documented: an observer's exception is dropped, the run goes on
  }
}

void LiveRun::event(RunEvent::Kind kind, std::string_view detail) {
  if (!observer_.on_event) return;
  RunEvent ev;
  ev.kind = kind;
  ev.detail = base::escape_text_capped(detail, kMaxEventDetailBytes, "...");
  base::MutexLock lock(mutex_);
  if (!open_) return;
  try {
    observer_.on_event(ev, Timestamp::clock::now());
  } catch (...) {
  }
}

void LiveRun::skill_event(const Event& event) {
  if (!observer_.on_event) return;
  RunEvent ev;
  ev.kind = RunEvent::Kind::skill_event;
  ev.detail = base::escape_text_capped(event.type, kMaxEventDetailBytes, "...");
  ev.data_json = event.data_json;
  base::MutexLock lock(mutex_);
  if (!open_) return;
  try {
    observer_.on_event(ev, Timestamp::clock::now());
  } catch (...) {
  }
}

void LiveRun::close() {
  base::MutexLock lock(mutex_);
  open_ = false;
}

std::vector<LogEntry> LiveRun::take_logs() {
  base::MutexLock lock(mutex_);
  return std::move(logs_);
}

namespace {

struct Describe {
  std::string operator()(const bus::LogRequest& /*r*/) const { return {}; }
  std::string operator()(const bus::FsReadFileRequest& r) const { return "fs.readFile " + r.path; }
  std::string operator()(const bus::FsWriteFileRequest& r) const {
    return (r.append ? "fs.appendFile " : "fs.writeFile ") + r.path;
  }
  std::string operator()(const bus::FsReaddirRequest& r) const { return "fs.readdir " + r.path; }
  std::string operator()(const bus::FsStatRequest& r) const { return "fs.stat " + r.path; }
  std::string operator()(const bus::FsExistsRequest& r) const { return "fs.exists " + r.path; }
  std::string operator()(const bus::FsMkdirRequest& r) const { return "fs.mkdir " + r.path; }
  std::string operator()(const bus::FsRemoveRequest& r) const { return "fs.remove " + r.path; }
  std::string operator()(const bus::FsRenameRequest& r) const { return "fs.rename " + r.from + " " + r.to; }
  std::string operator()(const bus::HttpRequest& r) const { return "http " + r.method + " " + r.url; }
  std::string operator()(const bus::StoreGetRequest& r) const { return "store.get " + r.key; }
  std::string operator()(const bus::StoreSetRequest& r) const { return "store.set " + r.key; }
  std::string operator()(const bus::StoreDeleteRequest& r) const { return "store.delete " + r.key; }
  std::string operator()(const bus::StoreKeysRequest& r) const { return "store.keys " + r.prefix; }
  std::string operator()(const bus::StoreIncrementRequest& r) const { return "store.increment " + r.key; }
  std::string operator()(const bus::StoreCompareAndSetRequest& r) const {
    return "store.compareAndSet " + r.key;
  }
  std::string operator()(const bus::EnvGetRequest& r) const { return "env.get " + r.name; }
  // OpenHuman bundles (compat/): the event type, the statement kind and the credential kind only; SQL
  // text and event data can carry the skill's data and are left out.
  std::string operator()(const bus::EventRequest& r) const { return "event " + r.type; }
  std::string operator()(const bus::DbRequest& r) const {
    return std::string(r.op == bus::DbOp::exec ? "db.exec" : r.op == bus::DbOp::get ? "db.get" : "db.all");
  }
  std::string operator()(const bus::DbOpenRequest& /*r*/) const { return "db.open"; }
  std::string operator()(const bus::SourcesRequest& r) const {
    return "sources " + std::to_string(r.names.size()) + " files";
  }
  std::string operator()(const bus::CredentialRequest& r) const {
    return std::string(r.revoke ? "oauth.revoke " : "credential ") +
           (r.kind == bus::CredentialKind::oauth ? "oauth" : "auth");
  }
};

}  // namespace

std::string describe_request(const bus::Request& request) {
  if (request.valueless_by_exception()) return {};
  return std::visit(Describe{}, request);
}

}  // namespace skillbox::runner
