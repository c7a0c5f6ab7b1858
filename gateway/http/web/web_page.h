// WebPage: the web chat (chat.html, chat.js and chat.css beside this file), embedded in the binary
// at build time (cmake/embed_files.cmake), served by HttpApi at GET /, /chat.js and /chat.css with
// their Content-Type, a strict Content-Security-Policy (nothing but this origin's own files and
// fetches: no inline script or style, no frames, no other hosts) and an ETag the browser
// revalidates. Built once by HttpApi; immutable afterwards, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/http/exchange.h"

namespace smallmind::gateway::http {

// The embedded files' bytes, valid for the life of the process (defined in the source CMake
// generates from gateway/http/web/ with cmake/embed_files.cmake).
std::span<const std::byte> WebChatHtml();
std::span<const std::byte> WebChatJs();
std::span<const std::byte> WebChatCss();

// The policy every page response carries: the page loads its script and style from this origin,
// fetches only this origin (the API, /stats) and may not be framed.
inline constexpr char kWebContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

class WebPage {
 public:
  WebPage();

  // Whether `path` is one of the page's files.
  bool Serves(std::string_view path) const { return Find(path) != nullptr; }
  // The answer to `request` for the page file at `path` (Serves(path)): the file (200), 304 when
  // its If-None-Match holds the current ETag, 405 for a method other than GET.
  Response Serve(std::string_view path, const Request& request) const;

 private:
  struct Asset {
    std::string_view path;
    std::string_view content_type;
    std::span<const std::byte> bytes;
    std::string etag;  // "\"<hash of the bytes>\"", fixed for the binary
  };
  const Asset* Find(std::string_view path) const;

  std::vector<Asset> assets_;
};

}  // namespace smallmind::gateway::http
