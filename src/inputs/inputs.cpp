#include "inputs/inputs.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "model/compression.h"
#include "util/error.h"

namespace dpscope::inputs {

namespace fs = std::filesystem;

std::vector<std::string> folder_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && model::is_snapshot_file_name(e.path().filename().string())) {
      files.push_back(e.path().string());
    }
  }
  if (ec) throw InputError(dir, 0, "cannot list the folder: " + ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError(dir, 0, "no node snapshots (*.json, *.json.zst, *.json.gz) in this folder");
  return files;
}

std::vector<InputFile> expand(const std::vector<std::string>& args) {
  std::vector<InputFile> out;
  for (const auto& arg : args) {
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) {
      out.push_back({arg, ""});
      continue;
    }
    for (auto& f : folder_files(arg)) out.push_back({std::move(f), arg});
  }
  return out;
}

namespace {

// The top level of a JSON document, read without building it: whether it is
// valid JSON, an object, its keys and its "schema" string.
struct TopLevel : nlohmann::json_sax<nlohmann::json> {
  int depth = 0;
  bool object = false;
  bool schema_next = false;
  std::string schema;
  std::set<std::string> keys;

  bool null() override { return value(""); }
  bool boolean(bool) override { return value(""); }
  bool number_integer(number_integer_t) override { return value(""); }
  bool number_unsigned(number_unsigned_t) override { return value(""); }
  bool number_float(number_float_t, const string_t&) override { return value(""); }
  bool string(string_t& s) override { return value(s); }
  bool binary(binary_t&) override { return value(""); }
  bool start_object(std::size_t) override {
    if (depth == 0) object = true;
    schema_next = false;
    ++depth;
    return true;
  }
  bool key(string_t& k) override {
    if (depth == 1) {
      keys.insert(k);
      schema_next = k == "schema";
    }
    return true;
  }
  bool end_object() override { return --depth, true; }
  bool start_array(std::size_t) override {
    schema_next = false;
    ++depth;
    return true;
  }
  bool end_array() override { return --depth, true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool value(const std::string& s) {
    if (depth == 1 && schema_next) schema = s;
    schema_next = false;
    return true;
  }
};

}  // namespace

bool is_foreign_file(const std::string& path) {
  // Only on the error path. Foreign: complete, valid JSON that is not a
  // snapshot (another schema, no schema and none of a snapshot's sections, not
  // an object). A file cut short or damaged is not valid JSON: it stays an
  // error, whatever it was meant to be.
  try {
    const std::string text = model::read_file(path);  // decompressed when compressed
    TopLevel top;
    if (!nlohmann::json::sax_parse(text, &top, nlohmann::json::input_format_t::json, true)) return false;
    if (!top.object) return true;
    if (top.schema.rfind("dpscope.snapshot/", 0) == 0) return false;
    if (!top.schema.empty()) return true;
    return !(top.keys.count("node") || top.keys.count("netfilter") || top.keys.count("ebpf"));
  } catch (const std::exception&) {
    return false;  // unreadable or damaged compression: the load error says so
  }
}

namespace {

// Whether the error `e` of `file` skips it (said through `warn`); rethrows it otherwise.
void skip_or_rethrow(const InputFile& file, const std::exception_ptr& e, const Warn& warn) {
  try {
    std::rethrow_exception(e);
  } catch (const InputError& err) {
    if (file.folder.empty() || !is_foreign_file(file.path)) throw;
    if (warn) warn(file.path + ": not a node snapshot (" + err.what() + "): skipped");
  }
}

// A folder argument whose every file was skipped is an error of its own.
void require_a_snapshot_per_folder(const std::vector<InputFile>& files, const std::vector<bool>& read) {
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i].folder.empty() || (i > 0 && files[i - 1].folder == files[i].folder)) continue;
    size_t n = 0, got = 0;
    for (size_t j = i; j < files.size() && files[j].folder == files[i].folder; ++j, ++n) got += read[j] ? 1 : 0;
    if (got == 0) {
      throw InputError(files[i].folder, 0, "no node snapshots in this folder: its " + std::to_string(n) + " file" +
                                               (n == 1 ? " is" : "s are") + " not dpscope snapshots");
    }
  }
}

}  // namespace

std::vector<bool> read_snapshots(const std::vector<InputFile>& files, const model::LoadOptions& options, unsigned threads,
                                 const std::function<void(model::Snapshot& snapshot, size_t index)>& use) {
  std::vector<bool> read(files.size(), false);
  std::vector<std::exception_ptr> errors(files.size());
  std::vector<std::vector<std::string>> warnings(files.size());
  auto read_one = [&](size_t i) {
    try {
      model::LoadOptions own = options;
      own.warn = [&warnings, i](const std::string& w) { warnings[i].push_back(w); };
      model::Snapshot s = model::load_snapshot(files[i].path, own);
      use(s, i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  // What the reading of file i says, once it is read and every file before it too.
  auto finish = [&](size_t i) {
    if (options.warn) {
      for (const auto& w : warnings[i]) options.warn(w);
    }
    if (errors[i]) {
      skip_or_rethrow(files[i], errors[i], options.warn);
    } else {
      read[i] = true;
    }
  };
  if (threads == 1) {
    for (size_t i = 0; i < files.size(); ++i) {
      read_one(i);
      finish(i);
    }
  } else {
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i; (i = next++) < files.size();) read_one(i);
    };
    const size_t n = std::min<size_t>(files.size(), threads ? threads : std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < n; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    for (size_t i = 0; i < files.size(); ++i) finish(i);
  }
  require_a_snapshot_per_folder(files, read);
  return read;
}

std::vector<model::Snapshot> load_snapshots(const std::vector<std::string>& paths, const model::LoadOptions& options) {
  std::vector<InputFile> files;
  for (const auto& p : paths) files.push_back({p, ""});
  std::vector<std::optional<model::Snapshot>> loaded(paths.size());
  // stdin cannot be shared.
  const bool stdin_used = std::find(paths.begin(), paths.end(), "-") != paths.end();
  read_snapshots(files, options, stdin_used ? 1 : 0, [&](model::Snapshot& s, size_t i) { loaded[i] = std::move(s); });
  std::vector<model::Snapshot> out;
  out.reserve(paths.size());
  for (auto& s : loaded) out.push_back(std::move(*s));
  return out;
}

}  // namespace dpscope::inputs
