#include "common/base/bash_completion.h"

#include <cctype>
#include <sstream>
#include <vector>

namespace tessera::cli {

namespace {

struct OptionWords {
  std::vector<std::string> names;    // every spelling: --long, -s
  std::vector<std::string> choices;  // from a CLI::IsMember check ("TEXT:{a,b,c}"), else empty
  bool takes_value = false;
};

std::vector<std::string> choices_of(const std::string& type_name) {
  std::vector<std::string> choices;
  const auto open = type_name.find('{');
  const auto close = type_name.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return choices;
  std::stringstream list(type_name.substr(open + 1, close - open - 1));
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) choices.push_back(item);
  return choices;
}

std::vector<OptionWords> options_of(const CLI::App& app) {
  std::vector<OptionWords> result;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional() && option->get_lnames().empty() && option->get_snames().empty()) continue;
    if (option->get_group().empty()) continue;  // hidden
    OptionWords words;
    for (const auto& name : option->get_lnames()) words.names.push_back("--" + name);
    for (const auto& name : option->get_snames()) words.names.push_back("-" + name);
    words.takes_value = option->get_expected_max() > 0;  // flags expect 0 values
    if (words.takes_value) words.choices = choices_of(option->get_type_name());
    if (!words.names.empty()) result.push_back(words);
  }
  return result;
}

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
  return text;
}

// The case branch of one (sub)command: its option words, what its valued options complete to.
void write_command(std::ostream& out, const std::string& pattern, const CLI::App& app) {
  std::vector<std::string> all, valued, subcommands;
  const auto options = options_of(app);
  for (const auto& o : options) {
    all.insert(all.end(), o.names.begin(), o.names.end());
    if (o.takes_value) valued.insert(valued.end(), o.names.begin(), o.names.end());
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) subcommands.push_back(sub->get_name());
  out << "    " << pattern << ")\n";
  out << "      options='" << join(all) << "'\n";
  out << "      valued=' " << join(valued) << " '\n";
  out << "      subcommands='" << join(subcommands) << "'\n";
  bool any_choices = false;
  for (const auto& o : options)
    if (!o.choices.empty()) any_choices = true;
  if (any_choices) {
    out << "      case \"$prev\" in\n";
    for (const auto& o : options) {
      if (o.choices.empty()) continue;
      std::string names;
      for (const auto& n : o.names) names += (names.empty() ? "" : " | ") + n;
      out << "        " << names << ") choices='" << join(o.choices) << "' ;;\n";
    }
    out << "      esac\n";
  }
  out << "      ;;\n";
}

std::string function_name(const std::string& program) {
  std::string name = "_" + program;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
  const std::string program = app.get_name();
  const std::string function = function_name(program);
  const auto subs = app.get_subcommands([](const CLI::App*) { return true; });
  std::ostringstream out;
  out << "# bash completion for " << program << ", generated from its command-line definition\n"
      << "# (" << program << " --print-bash-completion); do not edit.\n"
      << function << "() {\n"
      << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
      << "  local command='' word options valued subcommands choices=''\n";
  if (!subs.empty()) {
    std::string names;
    for (const CLI::App* sub : subs) names += (names.empty() ? "" : "|") + sub->get_name();
    out << "  for word in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n"
        << "    case \"$word\" in " << names << ") command=\"$word\"; break ;; esac\n"
        << "  done\n";
  }
  out << "  case \"$command\" in\n";
  for (const CLI::App* sub : subs) write_command(out, sub->get_name(), *sub);
  write_command(out, "*", app);
  out << "  esac\n"
      << "  if [ -n \"$choices\" ]; then\n"
      << "    mapfile -t COMPREPLY < <(compgen -W \"$choices\" -- \"$cur\")\n"
      << "  elif [[ \"$valued\" == *\" $prev \"* ]]; then\n"
      << "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
      << "  elif [[ \"$cur\" == -* ]]; then\n"
      << "    mapfile -t COMPREPLY < <(compgen -W \"$options\" -- \"$cur\")\n"
      << "  else\n"
      << "    mapfile -t COMPREPLY < <(compgen -W \"$subcommands\" -- \"$cur\"; compgen -f -- \"$cur\")\n"
      << "  fi\n"
      << "}\n"
      << "complete -o filenames -F " << function << " " << program << "\n";
  return out.str();
}

}  // namespace tessera::cli
