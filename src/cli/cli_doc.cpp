#include "cli/cli_doc.h"

#include "cli/command_table.h"

namespace dpscope::cli {

namespace {

// The value names in "{a,b,c}" (cli/options.h choice_type, CLI::IsMember).
std::vector<std::string> braced_choices(const std::string& type) {
  std::vector<std::string> out;
  const size_t open = type.find('{');
  const size_t close = type.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return out;
  std::string item;
  for (char c : type.substr(open + 1, close - open - 1)) {
    if (c == ',') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else if (c != ' ') {
      item += c;
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

bool names_files(const std::string& type) {
  return type.find("FILE") != std::string::npos || type.find("DIR") != std::string::npos ||
         type.find("PATH") != std::string::npos;
}

OptionDoc option_doc(const CLI::Option* o) {
  OptionDoc d;
  for (const auto& s : o->get_snames()) d.flags.push_back("-" + s);
  for (const auto& l : o->get_lnames()) d.flags.push_back("--" + l);
  d.help = o->get_description();
  if (o->get_type_size() == 0) return d;  // a flag
  std::string type = o->get_type_name();
  d.choices = braced_choices(type);
  if (!d.choices.empty()) {
    d.values = OptionDoc::Values::Choices;
    d.value = "{" + type.substr(type.find('{') + 1, type.find('}') - type.find('{') - 1) + "}";
  } else {
    d.value = type;
    d.values = names_files(type) ? OptionDoc::Values::Files : OptionDoc::Values::None;
  }
  return d;
}

std::vector<OptionDoc> visible_options(const CLI::App& app) {
  std::vector<OptionDoc> out;
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional() || o->get_group().empty()) continue;  // positionals; hidden ones
    out.push_back(option_doc(o));
  }
  return out;
}

}  // namespace

std::vector<OptionDoc> root_options(const CLI::App& root) { return visible_options(root); }

std::vector<CommandDoc> command_docs(const CLI::App& root) {
  std::vector<CommandDoc> out;
  for (const auto& spec : command_table()) {
    const CLI::App* sub = root.get_subcommand(spec.name);
    CommandDoc d;
    d.name = spec.name;
    d.summary = spec.summary;
    d.description = spec.description;
    d.examples = spec.examples;
    d.options = visible_options(*sub);
    for (const CLI::Option* o : sub->get_options()) {
      if (o->nonpositional()) continue;
      d.positional = o->get_name();
      d.positional_value = o->get_type_name();
      d.positional_help = o->get_description();
      d.positional_files = names_files(d.positional_value);
      d.positional_choices = braced_choices(d.positional_value);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace dpscope::cli
