#include "bus/messages.h"

#include <gtest/gtest.h>

namespace skillbox::bus {
namespace {

TEST(ErrorCodes, NamesAndCodesAreTheStableOnesFromTheDesign) {
  EXPECT_STREQ(error_name(ErrorCode::PermissionDenied), "PermissionDenied");
  EXPECT_STREQ(error_errno(ErrorCode::PermissionDenied), "EACCES");
  EXPECT_STREQ(error_name(ErrorCode::QuotaExceeded), "QuotaExceeded");
  EXPECT_STREQ(error_errno(ErrorCode::QuotaExceeded), "EQUOTA");
  EXPECT_STREQ(error_errno(ErrorCode::PayloadTooLarge), "E2BIG");
  EXPECT_STREQ(error_errno(ErrorCode::NetworkError), "ENET");
}

}  // namespace
}  // namespace skillbox::bus
