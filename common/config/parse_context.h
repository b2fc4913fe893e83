// What every section parser shares while one config is loaded: the load options, the
// directory relative paths are resolved against, and the list of errors found so far.
//
// Parsers never stop at the first problem: they record it here and go on, so an operator
// sees every mistake in one run. toStatus() renders them sorted by position.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/config/config_loader.h"
#include "common/config/site_config.h"
#include "common/status.h"

namespace scalws::common::config {

class ParseContext {
 public:
  // `base_dir` is absolute: the directory of the config file.
  ParseContext(LoadOptions options, std::string base_dir)
      : options_(options), base_dir_(std::move(base_dir)) {}

  const LoadOptions& options() const { return options_; }

  // Records "where: message".
  void error(const SourceLocation& where, std::string message);
  bool hasErrors() const { return !errors_.empty(); }

  // An absolute path unchanged; a relative one joined to the config's directory.
  std::string resolvePath(std::string_view path) const;

  // kInvalidArgument with every error, one per line, sorted by line then column (errors at
  // the same place keep the order they were found in); ok when there is none.
  Status toStatus() const;

 private:
  struct Error {
    SourceLocation where;
    std::string message;
  };

  LoadOptions options_;
  std::string base_dir_;
  std::vector<Error> errors_;
};

}  // namespace scalws::common::config
