#include "gateway/http/web/web_page.h"

#include <cstdint>

#include <spdlog/fmt/fmt.h>

namespace smallmind::gateway::http {
namespace {

// FNV-1a, 64 bits: an ETag only has to change when the bytes do.
uint64_t Fnv1a(std::span<const std::byte> bytes) {
  uint64_t h = 14695981039346656037ull;
  for (std::byte b : bytes) {
    h ^= static_cast<uint8_t>(b);
    h *= 1099511628211ull;
  }
  return h;
}

void SetCommonHeaders(Response& r) {
  r.set("Content-Security-Policy", kWebContentSecurityPolicy);
  r.set("X-Content-Type-Options", "nosniff");
  r.set("X-Frame-Options", "DENY");
  r.set("Referrer-Policy", "no-referrer");
  // Revalidate every time (a cheap 304): a new gateway binary must not meet a stale script.
  r.set(beast_http::field::cache_control, "no-cache");
}

}  // namespace

WebPage::WebPage() {
  auto add = [this](std::string_view path, std::string_view type, std::span<const std::byte> b) {
    assets_.push_back({path, type, b, fmt::format("\"{:016x}\"", Fnv1a(b))});
  };
  add("/", "text/html; charset=utf-8", WebChatHtml());
  add("/chat.js", "text/javascript; charset=utf-8", WebChatJs());
  add("/chat.css", "text/css; charset=utf-8", WebChatCss());
}

const WebPage::Asset* WebPage::Find(std::string_view path) const {
  for (const Asset& a : assets_) {
    if (a.path == path) return &a;
  }
  return nullptr;
}

Response WebPage::Serve(std::string_view path, const Request& request) const {
  const Asset* asset = Find(path);
  if (asset == nullptr || request.method() != beast_http::verb::get) {
    Response r{beast_http::status::method_not_allowed, 11};
    r.set(beast_http::field::allow, "GET");
    r.set(beast_http::field::content_type, "text/plain; charset=utf-8");
    r.body() = fmt::format("{} takes GET only\n", path);
    return r;
  }
  if (auto it = request.find(beast_http::field::if_none_match);
      it != request.end() && it->value().find(asset->etag) != std::string_view::npos) {
    Response r{beast_http::status::not_modified, 11};
    r.set(beast_http::field::etag, asset->etag);
    SetCommonHeaders(r);
    return r;
  }
  Response r{beast_http::status::ok, 11};
  r.set(beast_http::field::content_type, std::string(asset->content_type));
  r.set(beast_http::field::etag, asset->etag);
  SetCommonHeaders(r);
  r.body().assign(reinterpret_cast<const char*>(asset->bytes.data()), asset->bytes.size());
  return r;
}

}  // namespace smallmind::gateway::http
