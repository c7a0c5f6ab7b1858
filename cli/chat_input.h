// ChatInput: what a person types into `smallmind chat`, one entry at a time. A message is a line;
// a line ending in a backslash goes on with the next one (the backslash becomes a newline), for
// multi-line messages. A line starting with '/' is a command: /reset, /system TEXT, /model NAME,
// /help, /exit. Pure functions over a stream; thread-compatible.
#pragma once

#include <functional>
#include <istream>
#include <optional>
#include <string>

namespace smallmind::cli {

struct ChatEntry {
  enum class Kind { kMessage, kReset, kSystem, kModel, kHelp, kExit, kUnknown };
  Kind kind = Kind::kMessage;
  std::string text;  // the message; the argument of /system and /model; an unknown command
};

// The entry a finished text (continuations joined) is.
ChatEntry ParseChatEntry(std::string text);
// The next entry of `in`, nullopt at its end with nothing read (an unfinished continuation at the
// end is a message). Blank lines are skipped. `prompt(continued)` runs before each line is read.
std::optional<ChatEntry> ReadChatEntry(std::istream& in,
                                       const std::function<void(bool continued)>& prompt);

// The commands, for /help and `smallmind chat --help`.
inline constexpr char kChatHelp[] =
    "Type a message and press Enter; end a line with \\ to go on with the next one.\n"
    "  /reset         forget the conversation (the system prompt stays)\n"
    "  /system TEXT   set the system prompt (empty: none) and start over\n"
    "  /model NAME    talk to another served model (smallmind models lists them)\n"
    "  /help          this text\n"
    "  /exit          leave (so does end of input, Ctrl-D)\n"
    "Ctrl-C stops the answer being written and keeps the chat open.\n";

}  // namespace smallmind::cli
