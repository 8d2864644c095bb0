#include "common/net/protocol.h"

namespace tessera::net {

std::string body_name(wire::Envelope::BodyCase body) {
  if (body == wire::Envelope::BODY_NOT_SET) return "empty";
  const auto* field = wire::Envelope::descriptor()->FindFieldByNumber(int(body));
  return field ? field->name() : "field " + std::to_string(int(body));
}

std::string body_name(const wire::Envelope& message) { return body_name(message.body_case()); }

}  // namespace tessera::net
