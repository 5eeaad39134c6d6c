// state/store_values.h: the sum's spelling is JSON.stringify's, and JSON value equality is jsonb's.
#include "state/store_values.h"

#include <gtest/gtest.h>

#include <limits>

namespace skillbox::state {
namespace {

TEST(StoreValues, NumbersAreSpelledAsJsonStringifySpellsThem) {
  // Expected texts are what `JSON.stringify(x)` prints in QuickJS and V8 (ECMA-262 Number::toString).
  EXPECT_EQ(json_number_text(0), "0");
  EXPECT_EQ(json_number_text(-0.0), "0");
  EXPECT_EQ(json_number_text(42), "42");
  EXPECT_EQ(json_number_text(-1.5), "-1.5");
  EXPECT_EQ(json_number_text(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(json_number_text(1e20), "100000000000000000000");
  EXPECT_EQ(json_number_text(1e21), "1e+21");
  EXPECT_EQ(json_number_text(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(json_number_text(0.000001), "0.000001");
  EXPECT_EQ(json_number_text(1e-7), "1e-7");
  EXPECT_EQ(json_number_text(1.5e-7), "1.5e-7");
  EXPECT_EQ(json_number_text(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(json_number_text(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(json_number_text(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(json_number_text(-2.5e-300), "-2.5e-300");
}

TEST(StoreValues, OnlyFiniteJsonNumbersAreNumbers) {
  EXPECT_EQ(json_number_value(" 2.5E1 "), 25);
  EXPECT_EQ(json_number_value("-0"), 0);
  EXPECT_EQ(json_number_value("1e999"), std::nullopt);
  EXPECT_EQ(json_number_value("\"5\""), std::nullopt);
  EXPECT_EQ(json_number_value("[1]"), std::nullopt);
  EXPECT_EQ(json_number_value("01"), std::nullopt) << "not JSON";
  EXPECT_EQ(json_number_value("NaN"), std::nullopt);
}

TEST(StoreValues, JsonValueEquality) {
  EXPECT_TRUE(json_values_equal("1", "1.0"));
  EXPECT_TRUE(json_values_equal("1", "1e0"));
  EXPECT_TRUE(json_values_equal(R"({"a":1,"b":[1,{"c":null}]})", R"({ "b" : [1, {"c": null}], "a" : 1 })"));
  EXPECT_TRUE(json_values_equal(R"("\u00e9")", "\"\xc3\xa9\""));
  EXPECT_TRUE(json_values_equal(R"("\ud800")", R"("\uD800")")) << "a lone surrogate, either case";
  EXPECT_FALSE(json_values_equal("[1,2]", "[2,1]"));
  EXPECT_FALSE(json_values_equal("1", "\"1\""));
  EXPECT_FALSE(json_values_equal("null", "false"));
  EXPECT_FALSE(json_values_equal("0", "false"));
  EXPECT_FALSE(json_values_equal(R"({"a":1})", R"({"a":1,"b":2})"));
}

}  // namespace
}  // namespace skillbox::state
