// bus/messages.cpp — the names and codes skills see for each ErrorCode.
#include "bus/messages.h"

namespace skillbox::bus {

const char* error_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::PermissionDenied:
      return "PermissionDenied";
    case ErrorCode::NotFound:
      return "NotFound";
    case ErrorCode::QuotaExceeded:
      return "QuotaExceeded";
    case ErrorCode::InvalidArgument:
      return "InvalidArgument";
    case ErrorCode::PayloadTooLarge:
      return "PayloadTooLarge";
    case ErrorCode::Timeout:
      return "Timeout";
    case ErrorCode::NetworkError:
      return "NetworkError";
    case ErrorCode::AlreadyExists:
      return "AlreadyExists";
    case ErrorCode::NotEmpty:
      return "NotEmpty";
    case ErrorCode::IoError:
      return "IoError";
  }
  return "IoError";
}

const char* error_errno(ErrorCode code) {
  switch (code) {
    case ErrorCode::PermissionDenied:
      return "EACCES";
    case ErrorCode::NotFound:
      return "ENOENT";
    case ErrorCode::QuotaExceeded:
      return "EQUOTA";
    case ErrorCode::InvalidArgument:
      return "EINVAL";
    case ErrorCode::PayloadTooLarge:
      return "E2BIG";
    case ErrorCode::Timeout:
      return "ETIMEDOUT";
    case ErrorCode::NetworkError:
      return "ENET";
    case ErrorCode::AlreadyExists:
      return "EEXIST";
    case ErrorCode::NotEmpty:
      return "ENOTEMPTY";
    case ErrorCode::IoError:
      return "EIO";
  }
  return "EIO";
}

bool is_error_errno(std::string_view code) {
  for (auto c = static_cast<int>(ErrorCode::PermissionDenied); c <= static_cast<int>(ErrorCode::IoError); ++c)
    if (code == error_errno(static_cast<ErrorCode>(c))) return true;
  return false;
}

}  // namespace skillbox::bus
