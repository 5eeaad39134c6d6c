// base/json_schema.cpp — JSON Schema draft 7 through valijson (see json_schema.h).
#include "base/json_schema.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <exception>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "base/ecma_regex.h"
#include "base/quote.h"

// valijson reports a schema it cannot use by throwing; without this it prints and aborts.
#define VALIJSON_USE_EXCEPTIONS 1
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

// valijson 1.0 (Debian 12) matches "pattern", "patternProperties" and the date and time formats with
// std::regex, hard-wired (the RegexEngine parameter came in later releases). libstdc++'s std::regex
// backtracks ("^(a+)+$" on 50,000 "a"s and a "!" never ends) and recurses once per character (a
// 100,000-digit "date" overflowed the stack and ended the process). The three visits that use it are
// replaced here, for the adapter skillbox validates through and the one valijson uses for the keys under
// "propertyNames", by the same logic on RE2, which matches in linear time without recursion. (An explicit
// specialization of a member of a class template: this must stay the only file that includes valijson, or
// another file could instantiate the originals.)
namespace skillbox::base::schema_regex {

/// The patterns of one schema, compiled at JsonSchema::compile, keyed by their text.
using PatternTable = std::unordered_map<std::string, EcmaRegex>;

/// The table of the schema being validated on this thread (JsonSchema::validate sets it for the call).
thread_local const PatternTable* t_patterns = nullptr;

/// True when `pattern` (an ECMAScript pattern) matches somewhere in `subject`.
bool search(const std::string& pattern, std::string_view subject) {
  if (t_patterns != nullptr)
    if (const auto it = t_patterns->find(pattern); it != t_patterns->end()) return it->second.search(subject);
  // Not in the table: the meta-schema check at compile time, which has no patterns. Linear time anyway.
  const Result<EcmaRegex> re = EcmaRegex::compile(pattern);
  return re.ok() && re->search(subject);
}

/// valijson's date, time and date-time expressions, in RE2 syntax; month and day captured.
const RE2& date_re() {
  static const RE2 kRe("[0-9]+-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])");
  return kRe;
}
const RE2& time_re() {
  static const RE2 kRe(
      "(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\\.[0-9]+)?(?:[Zz]|[+\\-](?:[01][0-9]|2[0-3]):[0-"
      "5][0-9])");
  return kRe;
}
const RE2& date_time_re() {
  static const RE2 kRe(
      "[0-9]+-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)"
      "(?:\\.[0-9]+)?(?:[Zz]|[+\\-](?:[01][0-9]|2[0-3]):[0-5][0-9])");
  return kRe;
}

}  // namespace skillbox::base::schema_regex

namespace skillbox::base::schema_regex {

/// True when `day` exists in `month` (any year: 29 February passes), as valijson's own check.
bool day_in_month(int month, int day) {
  if (month == 2) return day <= 29;
  const bool short_month = month <= 7 ? month % 2 == 0 : month % 2 != 0;
  return day <= (short_month ? 30 : 31);
}

/// True when `s` is a `format` valijson checks ("date", "time", "date-time"), or the format is another.
bool format_ok(const std::string& s, const std::string& format) {
  int month = 0, day = 0;
  if (format == "date") return RE2::FullMatch(s, date_re(), &month, &day) && day_in_month(month, day);
  if (format == "time") return RE2::FullMatch(s, time_re());
  if (format == "date-time")
    return RE2::FullMatch(s, date_time_re(), &month, &day) && day_in_month(month, day);
  return true;
}

}  // namespace skillbox::base::schema_regex

namespace valijson {

using SkillboxVisitor = ValidationVisitor<adapters::NlohmannJsonAdapter>;
// The visitor valijson uses for each key under "propertyNames": its patterns and formats too.
using SkillboxKeyVisitor = ValidationVisitor<adapters::StdStringAdapter>;

namespace {
/// The "pattern" check of both visitors: a string `target` against the pattern, matched by RE2, an error
/// pushed when it does not match. Other types pass (the keyword applies to strings only).
template <typename Adapter>
bool check_pattern(const Adapter& target, bool strict_types, const constraints::PatternConstraint& constraint,
                   ValidationResults* results, const std::vector<std::string>& context) {
  if ((strict_types && !target.isString()) || !target.maybeString()) return true;
  if (skillbox::base::schema_regex::search(constraint.getPattern<std::string::allocator_type>(),
                                           target.asString()))
    return true;
  if (results != nullptr)
    results->pushError(context, "Failed to match regex specified by 'pattern' constraint.");
  return false;
}
}  // namespace

template <>
bool SkillboxVisitor::visit(const constraints::PatternConstraint& constraint) {
  return check_pattern(m_target, m_strictTypes, constraint, m_results, m_context);
}

template <>
bool SkillboxKeyVisitor::visit(const constraints::PatternConstraint& constraint) {
  return check_pattern(m_target, m_strictTypes, constraint, m_results, m_context);
}

namespace {
/// The "format" check of both visitors: `value` against `format`, an error pushed when it fails.
bool check_format(const std::string& value, const std::string& format, ValidationResults* results,
                  const std::vector<std::string>& context) {
  const bool ok = skillbox::base::schema_regex::format_ok(value, format);
  if (!ok && results != nullptr) results->pushError(context, "String should be a valid " + format);
  return ok;
}
}  // namespace

template <>
bool SkillboxVisitor::visit(const constraints::FormatConstraint& constraint) {
  return check_format(m_target.asString(), constraint.getFormat(), m_results, m_context);
}

template <>
bool SkillboxKeyVisitor::visit(const constraints::FormatConstraint& constraint) {
  return check_format(m_target.asString(), constraint.getFormat(), m_results, m_context);
}

template <>
bool SkillboxVisitor::visit(const constraints::PropertiesConstraint& constraint) {
  if ((m_strictTypes && !m_target.isObject()) || !m_target.maybeObject()) return true;
  bool validated = true;
  std::set<std::string> matched;  // the properties some subschema has validated
  const adapters::NlohmannJsonAdapter::Object object = m_target.asObject();
  constraint.applyToProperties(ValidatePropertySubschemas(object, m_context, true, m_results != nullptr, true,
                                                          m_strictTypes, m_results, &matched, &validated,
                                                          m_regexesCache));
  if (!validated && !m_results) return false;
  constraint.applyToPatternProperties([&](const auto& pattern_text, const Subschema* subschema) {
    const std::string pattern(pattern_text.c_str());
    for (const adapters::NlohmannJsonAdapter::ObjectMember m : object) {
      if (!skillbox::base::schema_regex::search(pattern, m.first)) continue;
      matched.insert(m.first);
      std::vector<std::string> context = m_context;
      context.push_back("[" + m.first + "]");
      SkillboxVisitor member(m.second, context, m_strictTypes, m_results, m_regexesCache);
      if (member.validateSchema(*subschema)) continue;
      if (m_results)
        m_results->pushError(m_context,
                             "Failed to validate against schema associated with pattern '" + pattern + "'.");
      validated = false;
      return false;  // as valijson: the first failing pattern property ends the walk
    }
    return true;
  });
  const Subschema* additional = constraint.getAdditionalPropertiesSubschema();
  for (const adapters::NlohmannJsonAdapter::ObjectMember m : object) {
    if (matched.contains(m.first)) continue;
    if (additional == nullptr) {
      if (m_results)
        m_results->pushError(m_context,
                             "Object contains a property that could not be validated using 'properties' or "
                             "'additionalProperties' constraints: '" +
                                 m.first + "'.");
      return false;
    }
    std::vector<std::string> context = m_context;
    context.push_back("[" + m.first + "]");
    SkillboxVisitor member(m.second, context, m_strictTypes, m_results, m_regexesCache);
    if (!member.validateSchema(*additional)) {
      if (m_results)
        m_results->pushError(m_context, "Failed to validate against additional properties schema");
      validated = false;
    }
  }
  return validated;
}

}  // namespace valijson

namespace skillbox::base {
namespace {

using nlohmann::json;
using schema_regex::PatternTable;

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
constexpr size_t kMaxShownPatternBytes = 200;

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

/// Compiles each "pattern" and "patternProperties" key of `schema` (an ECMAScript regular expression)
/// for RE2 into `out`, keyed by its text. Values that are data ("enum", "const", "default", "examples")
/// are not schemas and are skipped. The error names the place and the pattern.
std::optional<std::string> compile_patterns(const json& schema, const std::string& at, PatternTable& out) {
  if (schema.is_array()) {
    for (size_t i = 0; i < schema.size(); ++i)
      if (auto bad = compile_patterns(schema[i], at + "/" + std::to_string(i), out)) return bad;
    return std::nullopt;
  }
  if (!schema.is_object()) return std::nullopt;
  const auto add = [&out](const std::string& pattern,
                          const std::string& where) -> std::optional<std::string> {
    if (out.contains(pattern)) return std::nullopt;
    Result<EcmaRegex> re = EcmaRegex::compile(pattern);
    if (!re)
      return "at " + where + ": the pattern " + base::quote(pattern, kMaxShownPatternBytes) +
             " cannot be used: " + re.error().message;
    out.emplace(pattern, std::move(*re));
    return std::nullopt;
  };
  for (const auto& [key, value] : schema.items()) {
    if (key == "enum" || key == "const" || key == "default" || key == "examples") continue;
    const std::string here = at + "/" + pointer_token(key);
    if (key == "pattern" && value.is_string()) {
      if (auto bad = add(value.get<std::string>(), here)) return bad;
      continue;
    }
    if (key == "patternProperties" && value.is_object())
      for (const auto& [pattern, sub] : value.items())
        if (auto bad = add(pattern, here + "/" + pointer_token(pattern))) return bad;
    if (auto bad = compile_patterns(value, here, out)) return bad;
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
  PatternTable patterns;  // every "pattern" and "patternProperties" key, compiled for RE2
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
  auto compiled = std::make_shared<Compiled>();
  if (auto bad = compile_patterns(schema, "", compiled->patterns)) return Error{*bad};
  compiled->document = schema;
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
  // This schema's compiled patterns, for the visits above, for the length of this call.
  struct PatternScope {
    const PatternTable* saved = schema_regex::t_patterns;
    explicit PatternScope(const PatternTable* table) { schema_regex::t_patterns = table; }
    ~PatternScope() { schema_regex::t_patterns = saved; }
    PatternScope(const PatternScope&) = delete;
    PatternScope& operator=(const PatternScope&) = delete;
  } scope(&compiled_->patterns);
  valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  try {
    if (validator.validate(compiled_->schema, valijson::adapters::NlohmannJsonAdapter(value), &results))
      return std::nullopt;
  } catch (const std::exception& e) {
    // valijson refuses what it cannot check (a number too large to convert, ...): not accepted.
    return SchemaMismatch{.instance_path = "",
                          .keyword = "pattern",
                          .message = std::string("the validator could not check the value: ") + e.what()};
  }
  std::optional<SchemaMismatch> why = deepest(results);
  if (!why) why = SchemaMismatch{.instance_path = "", .keyword = "schema", .message = "does not match"};
  return why;
}

}  // namespace skillbox::base
