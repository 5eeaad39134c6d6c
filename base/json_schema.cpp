// base/json_schema.cpp — JSON Schema draft 7 through valijson (see json_schema.h).
#include "base/json_schema.h"

#include <algorithm>
#include <array>
#include <exception>
#include <regex>
#include <string_view>
#include <utility>

#include "base/quote.h"

// valijson reports a schema it cannot use by throwing; without this it prints and aborts.
#define VALIJSON_USE_EXCEPTIONS 1
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace skillbox::base {
namespace {

using nlohmann::json;

/// The draft 7 meta-schema (json-schema.org/draft-07/schema, the schema every draft 7 schema must
/// match), without its "$id" and "$schema" so that its "#" references resolve to this copy and nothing
/// is ever fetched.
constexpr std::string_view kDraft7MetaSchema = R"json({
  "definitions": {
    "schemaArray": {"type": "array", "minItems": 1, "items": {"$ref": "#"}},
    "nonNegativeInteger": {"type": "integer", "minimum": 0},
    "nonNegativeIntegerDefault0": {"allOf": [{"$ref": "#/definitions/nonNegativeInteger"}, {"default": 0}]},
    "simpleTypes": {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]},
    "stringArray": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "default": []}
  },
  "type": ["object", "boolean"],
  "properties": {
    "$id": {"type": "string"},
    "$schema": {"type": "string"},
    "$ref": {"type": "string"},
    "$comment": {"type": "string"},
    "title": {"type": "string"},
    "description": {"type": "string"},
    "default": true,
    "readOnly": {"type": "boolean"},
    "writeOnly": {"type": "boolean"},
    "examples": {"type": "array", "items": true},
    "multipleOf": {"type": "number", "exclusiveMinimum": 0},
    "maximum": {"type": "number"},
    "exclusiveMaximum": {"type": "number"},
    "minimum": {"type": "number"},
    "exclusiveMinimum": {"type": "number"},
    "maxLength": {"$ref": "#/definitions/nonNegativeInteger"},
    "minLength": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
    "pattern": {"type": "string"},
    "additionalItems": {"$ref": "#"},
    "items": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/schemaArray"}]},
    "maxItems": {"$ref": "#/definitions/nonNegativeInteger"},
    "minItems": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
    "uniqueItems": {"type": "boolean"},
    "contains": {"$ref": "#"},
    "maxProperties": {"$ref": "#/definitions/nonNegativeInteger"},
    "minProperties": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
    "required": {"$ref": "#/definitions/stringArray"},
    "additionalProperties": {"$ref": "#"},
    "definitions": {"type": "object", "additionalProperties": {"$ref": "#"}},
    "properties": {"type": "object", "additionalProperties": {"$ref": "#"}},
    "patternProperties": {"type": "object", "additionalProperties": {"$ref": "#"}},
    "dependencies": {"type": "object",
                     "additionalProperties": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/stringArray"}]}},
    "propertyNames": {"$ref": "#"},
    "const": true,
    "enum": {"type": "array", "items": true},
    "type": {"anyOf": [{"$ref": "#/definitions/simpleTypes"},
                       {"type": "array", "items": {"$ref": "#/definitions/simpleTypes"}, "minItems": 1,
                        "uniqueItems": true}]},
    "format": {"type": "string"},
    "contentMediaType": {"type": "string"},
    "contentEncoding": {"type": "string"},
    "if": {"$ref": "#"},
    "then": {"$ref": "#"},
    "else": {"$ref": "#"},
    "allOf": {"$ref": "#/definitions/schemaArray"},
    "anyOf": {"$ref": "#/definitions/schemaArray"},
    "oneOf": {"$ref": "#/definitions/schemaArray"},
    "not": {"$ref": "#"}
  }
})json";

/// The draft 7 dialect URIs a schema's "$schema" may name (with or without the empty fragment).
constexpr std::array<std::string_view, 4> kDraft7Uris = {
    "http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema"};

/// valijson names no keyword in its errors, only a sentence per constraint: the sentence's start tells
/// which keyword failed. Longer prefixes first where one starts another.
constexpr std::array<std::pair<std::string_view, std::string_view>, 32> kKeywordOfMessage = {{
    {"Failed to validate against any schemas allowed by anyOf", "anyOf"},
    {"Failed to validate against any child schemas allowed by oneOf", "oneOf"},
    {"Failed to validate against exactly one child schema", "oneOf"},
    {"Failed to validate against child schema #", "allOf"},
    {"Failed to validate against a conditional schema", "if"},
    {"Failed to match expected value set by 'const'", "const"},
    {"Failed to any values against subschema in 'contains'", "contains"},
    {"Failed to match against any enum values", "enum"},
    {"String should be a valid", "format"},
    {"Array contains more items than allowed by items", "additionalItems"},
    {"Cannot validate item #", "additionalItems"},
    {"Failed to validate item #", "items"},
    {"Expected number less than or equal to", "maximum"},
    {"Expected number less than", "exclusiveMaximum"},
    {"Expected number greater than or equal to", "minimum"},
    {"Expected number greater than", "exclusiveMinimum"},
    {"Array should contain no more than", "maxItems"},
    {"Array should contain no fewer than", "minItems"},
    {"String should be no more than", "maxLength"},
    {"String should be no fewer than", "minLength"},
    {"Object should have no more than", "maxProperties"},
    {"Object should have no fewer than", "minProperties"},
    {"Value could not be converted", "multipleOf"},
    {"Value should be a multiple of", "multipleOf"},
    {"Target should not validate against schema specified in 'not'", "not"},
    {"Failed to match regex specified by 'pattern'", "pattern"},
    {"Object contains a property that could not be validated", "additionalProperties"},
    {"Failed to validate against additional properties schema", "additionalProperties"},
    {"Failed to validate against schema associated with pattern", "patternProperties"},
    {"Failed to validate against schema associated with property name", "properties"},
    {"Value type not permitted by 'type'", "type"},
    {"Missing required property", "required"},
}};

std::string keyword_of(const std::string& message) {
  for (const auto& [prefix, keyword] : kKeywordOfMessage)
    if (message.starts_with(prefix)) return std::string(keyword);
  if (message.find("violate uniqueness constraint") != std::string::npos) return "uniqueItems";
  if (message.starts_with("Missing dependency") ||
      message.starts_with("Failed to validate against dependent"))
    return "dependencies";
  if (message.find("propertyNames") != std::string::npos ||
      message.find("property name") != std::string::npos)
    return "propertyNames";
  if (message.starts_with("Target value and comparison value")) return "const";
  return "schema";  // a sentence valijson added later; the message still says what failed
}

/// RFC 6901 escaping of one reference token.
std::string pointer_token(std::string_view token) {
  std::string out;
  for (const char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

/// valijson's context ("<root>", "[city]", "[0]") as a JSON Pointer.
std::string pointer_of(const std::vector<std::string>& context) {
  std::string out;
  for (const std::string& part : context) {
    if (part == "<root>") continue;
    const bool bracketed = part.size() >= 2 && part.front() == '[' && part.back() == ']';
    out += "/" + pointer_token(bracketed ? std::string_view(part).substr(1, part.size() - 2) : part);
  }
  return out;
}

/// How much of a failing place and of the validator's sentence an error shows.
constexpr size_t kMaxShownPathBytes = 256;
constexpr size_t kMaxShownMessageBytes = 512;

/// The deepest error of `results` (the first of the deepest): a property's own failure says more than
/// "failed to validate against schema associated with property name".
std::optional<SchemaMismatch> deepest(valijson::ValidationResults& results) {
  std::optional<SchemaMismatch> best;
  size_t best_depth = 0;
  valijson::ValidationResults::Error e;
  while (results.popError(e)) {
    if (best && e.context.size() <= best_depth) continue;
    best_depth = e.context.size();
    // Both may repeat keys of the value, which the client chose: bounded, and inert on a terminal.
    std::string path = pointer_of(e.context);
    if (path.size() > kMaxShownPathBytes) path = base::quote(path, kMaxShownPathBytes);
    best = SchemaMismatch{.instance_path = std::move(path),
                          .keyword = keyword_of(e.description),
                          .message = e.description.size() > kMaxShownMessageBytes
                                         ? base::quote(e.description, kMaxShownMessageBytes)
                                         : e.description};
  }
  return best;
}

/// Checks each "pattern" and "patternProperties" key of `schema` as an ECMAScript regular expression,
/// the way the validator will compile it. Values that are data ("enum", "const", "default",
/// "examples") are not schemas and are skipped.
std::optional<std::string> bad_pattern(const json& schema, const std::string& at) {
  if (schema.is_array()) {
    for (size_t i = 0; i < schema.size(); ++i)
      if (auto bad = bad_pattern(schema[i], at + "/" + std::to_string(i))) return bad;
    return std::nullopt;
  }
  if (!schema.is_object()) return std::nullopt;
  const auto check = [](const std::string& pattern, const std::string& where) -> std::optional<std::string> {
    try {
      std::regex compiled(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return "at " + where + ": \"" + pattern + "\" is not a regular expression this validator accepts (" +
             e.what() + ")";
    }
    return std::nullopt;
  };
  for (const auto& [key, value] : schema.items()) {
    if (key == "enum" || key == "const" || key == "default" || key == "examples") continue;
    const std::string here = at + "/" + pointer_token(key);
    if (key == "pattern" && value.is_string()) {
      if (auto bad = check(value.get<std::string>(), here)) return bad;
      continue;
    }
    if (key == "patternProperties" && value.is_object())
      for (const auto& [pattern, sub] : value.items())
        if (auto bad = check(pattern, here + "/" + pointer_token(pattern))) return bad;
    if (auto bad = bad_pattern(value, here)) return bad;
  }
  return std::nullopt;
}

/// The longest string matched against a "pattern" (or a key against "patternProperties"). libstdc++'s
/// std::regex, which valijson uses, recurses once per character: "^(a|b)*$" overflowed an 8 MiB stack at
/// 16 KiB of input (measured), which would end the whole server. 2 KiB keeps an 8x margin on that stack.
constexpr size_t kMaxPatternSubjectBytes = 2048;

/// True when `schema` has a "pattern" or "patternProperties" anywhere (data under "enum", "const",
/// "default" and "examples" aside).
bool has_patterns(const json& schema) {
  if (schema.is_array())
    return std::any_of(schema.begin(), schema.end(), [](const json& x) { return has_patterns(x); });
  if (!schema.is_object()) return false;
  for (const auto& [key, value] : schema.items()) {
    if (key == "enum" || key == "const" || key == "default" || key == "examples") continue;
    if ((key == "pattern" && value.is_string()) || (key == "patternProperties" && value.is_object()))
      return true;
    if (has_patterns(value)) return true;
  }
  return false;
}

/// The first string or key of `value` longer than kMaxPatternSubjectBytes, as a mismatch.
std::optional<SchemaMismatch> too_long_for_patterns(const json& value, const std::string& at) {
  const auto refuse = [&](size_t bytes, const std::string& where) {
    return SchemaMismatch{.instance_path = where,
                          .keyword = "pattern",
                          .message = "a string of " + std::to_string(bytes) + " bytes is longer than " +
                                     std::to_string(kMaxPatternSubjectBytes) +
                                     ", the most this schema's patterns are matched against; shorten it"};
  };
  if (value.is_string() && value.get_ref<const std::string&>().size() > kMaxPatternSubjectBytes)
    return refuse(value.get_ref<const std::string&>().size(), at);
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i)
      if (auto bad = too_long_for_patterns(value[i], at + "/" + std::to_string(i))) return bad;
  }
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      const std::string here = at + "/" + pointer_token(key);
      if (key.size() > kMaxPatternSubjectBytes) return refuse(key.size(), here);
      if (auto bad = too_long_for_patterns(member, here)) return bad;
    }
  }
  return std::nullopt;
}

/// The meta-schema, compiled once.
const valijson::Schema& meta_schema() {
  static const valijson::Schema* const kSchema = [] {
    auto* schema = new valijson::Schema;  // lives as long as the process, like any static
    const json doc = json::parse(kDraft7MetaSchema);
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    parser.populateSchema(valijson::adapters::NlohmannJsonAdapter(doc), *schema);
    return schema;
  }();
  return *kSchema;
}

}  // namespace

struct JsonSchema::Compiled {
  json document;  // the adapter refers into it while parsing; kept for the life of the schema
  valijson::Schema schema;
  bool patterns = false;  // values are first checked against kMaxPatternSubjectBytes
};

std::string SchemaMismatch::text() const {
  return (instance_path.empty() ? std::string("at the top level") : "at " + instance_path) + ": " + keyword +
         ": " + message;
}

Result<JsonSchema> JsonSchema::compile(const json& schema) {
  if (!schema.is_object() && !schema.is_boolean())
    return Error{"expected a JSON Schema (an object or true/false), got a JSON " +
                 std::string(schema.type_name())};
  if (schema.is_object() && schema.contains("$schema")) {
    const json& dialect = schema["$schema"];
    const bool draft7 =
        dialect.is_string() && std::find(kDraft7Uris.begin(), kDraft7Uris.end(),
                                         dialect.get_ref<const std::string&>()) != kDraft7Uris.end();
    if (!draft7)
      return Error{
          "at /$schema: only JSON Schema draft 7 (\"http://json-schema.org/draft-07/schema#\") is "
          "supported; remove \"$schema\" or name draft 7"};
  }
  valijson::Validator checker(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  if (!checker.validate(meta_schema(), valijson::adapters::NlohmannJsonAdapter(schema), &results)) {
    const std::optional<SchemaMismatch> why = deepest(results);
    return Error{(why ? why->text() : std::string("it does not match")) + " (the draft 7 meta-schema)"};
  }
  if (auto bad = bad_pattern(schema, "")) return Error{*bad};
  auto compiled = std::make_shared<Compiled>();
  compiled->document = schema;
  compiled->patterns = has_patterns(schema);
  try {
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    // The one document a "$ref" may name outside the schema is the draft 7 meta-schema, served from the
    // copy above: nothing is ever fetched.
    const auto fetch = [](const std::string& uri) -> const json* {
      const bool meta = std::find(kDraft7Uris.begin(), kDraft7Uris.end(), uri) != kDraft7Uris.end();
      return meta ? new json(json::parse(kDraft7MetaSchema)) : nullptr;
    };
    const auto free = [](const json* doc) { delete doc; };
    parser.populateSchema(valijson::adapters::NlohmannJsonAdapter(compiled->document), compiled->schema,
                          fetch, free);
  } catch (const std::exception& e) {
    std::string why = e.what();
    if (why.find("etch") != std::string::npos)  // "Failed to fetch ...", "Fetching of remote ..."
      why +=
          "; \"$ref\" may name a part of the same schema (\"#/definitions/...\") or the draft 7 "
          "meta-schema, nothing else";
    return Error{"the schema cannot be compiled: " + why};
  }
  return JsonSchema(std::move(compiled));
}

std::optional<SchemaMismatch> JsonSchema::validate(const json& value) const {
  if (compiled_->patterns)
    if (std::optional<SchemaMismatch> bad = too_long_for_patterns(value, "")) return bad;
  valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  try {
    if (validator.validate(compiled_->schema, valijson::adapters::NlohmannJsonAdapter(value), &results))
      return std::nullopt;
  } catch (const std::exception& e) {
    // std::regex can give up on a value (error_complexity, error_stack): the value is not accepted.
    return SchemaMismatch{.instance_path = "",
                          .keyword = "pattern",
                          .message = std::string("the validator could not check the value: ") + e.what()};
  }
  std::optional<SchemaMismatch> why = deepest(results);
  if (!why) why = SchemaMismatch{.instance_path = "", .keyword = "schema", .message = "does not match"};
  return why;
}

}  // namespace skillbox::base
