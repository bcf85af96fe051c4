// The one way Lens writes JSON: `JsonWriter`, a streaming writer into a
// std::string, and `AppendJsonString` for the one string a caller splices
// itself. Every surface (REST APIs, node reports, log lines, training records,
// CLI output, Kubernetes bodies) writes through it, so every document follows
// the same rules:
//   - strings: '"' and '\' escaped, \n \r \t by name, other control bytes as
//     \u00XX; invalid UTF-8 and NUL become U+FFFD, so the output is always
//     valid JSON (and valid for PostgreSQL's jsonb);
//   - numbers: integers exactly; finite doubles in the shortest text that
//     reads back as the same double (0.8995, not 0.8995000000000001; 2, not
//     2.0); NaN and the infinities, which JSON has no numbers for, as null,
//     or as the strings "nan", "inf", "-inf" where a format keeps them;
//   - commas and colons placed by the writer, never by the caller.
#ifndef LENS_CORE_JSON_H_
#define LENS_CORE_JSON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lens {

// Appends `s` as a quoted JSON string, with the rules above. Thread-safe.
void AppendJsonString(std::string_view s, std::string* out);

// Writes one JSON document (or, with Take or Reset, several in turn) into a
// string it owns, or appends it to a caller's string (a streamed document:
// the caller may write the text out and clear its string between values).
// Calls mirror the document: StartObject, Key, a value, ..., EndObject. The
// writer does not check that calls are balanced; the tests of each document
// do. Not thread-safe; cheap to construct.
struct JsonWriterOptions {
  // NaN, +Inf, -Inf as "nan", "inf", "-inf" (quoted) instead of null.
  bool non_finite_as_strings = false;
  // Strings' bytes as they are, only escaped: a document passed through from
  // another server (a Kubernetes object kept as text) stays byte for byte
  // what the server sent, as the slices of its lines do. Never for text
  // Lens makes or stores.
  bool verbatim_strings = false;
};

class JsonWriter {
 public:
  using Options = JsonWriterOptions;

  JsonWriter() = default;
  explicit JsonWriter(Options options) : options_(options) {}
  // Appends to `*out`, which must outlive the writer.
  explicit JsonWriter(std::string* out, Options options = {})
      : options_(options), out_(out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void StartObject() { OpenContainer('{'); }
  void EndObject() { CloseContainer('}'); }
  void StartArray() { OpenContainer('['); }
  void EndArray() { CloseContainer(']'); }

  // An object member's name; the next call writes its value.
  void Key(std::string_view key);

  // A string value; in an object where a member's name is due, the name
  // (as RapidJSON's Writer, whose callers write names with String too).
  void String(std::string_view s);
  void Null();
  void Bool(bool b);
  void Int(int64_t v) { Int64(v); }
  void Int64(int64_t v);
  void Uint(uint64_t v) { Uint64(v); }
  void Uint64(uint64_t v);
  void Double(double v);
  // A value already rendered as JSON (a stored document, a number's exact
  // text); the caller vouches that it is one valid JSON value.
  void RawValue(std::string_view json);

  // Members of the common shapes: Key then the value.
  void Member(std::string_view key, std::string_view value) {
    Key(key);
    String(value);
  }
  void Member(std::string_view key, const char* value) {
    Key(key);
    String(value);
  }
  void Member(std::string_view key, const std::string& value) {
    Key(key);
    String(value);
  }
  void Member(std::string_view key, bool value) {
    Key(key);
    Bool(value);
  }
  void Member(std::string_view key, int value) {
    Key(key);
    Int64(value);
  }
  void Member(std::string_view key, int64_t value) {
    Key(key);
    Int64(value);
  }
  void Member(std::string_view key, uint64_t value) {
    Key(key);
    Uint64(value);
  }
  void Member(std::string_view key, double value) {
    Key(key);
    Double(value);
  }

  // The text written so far.
  const std::string& str() const { return *out_; }
  size_t size() const { return out_->size(); }
  // Moves the text out and resets the writer for a new document.
  std::string Take();
  // Empties the text and forgets any open object or array.
  void Reset();
  // Reserves room for a document of about `bytes`.
  void Reserve(size_t bytes) { out_->reserve(bytes); }

 private:
  // Before a value: a comma when it is not the first in its container.
  void BeforeValue();
  // `s` quoted and escaped (repaired unless verbatim_strings).
  void Quoted(std::string_view s);
  void OpenContainer(char c);
  void CloseContainer(char c);

  Options options_;
  std::string own_;
  std::string* out_ = &own_;
  // One entry per open container.
  struct Open {
    bool object;     // an object: names and values alternate
    bool has_value;  // something written in it: the next gets a comma
  };
  std::vector<Open> open_;
  // The last call was Key: the value follows without a comma.
  bool after_key_ = false;
};

}  // namespace lens

#endif  // LENS_CORE_JSON_H_
