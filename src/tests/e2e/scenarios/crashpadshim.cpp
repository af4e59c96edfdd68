// A Python process's way into Crashpad's client library, loaded with
// ctypes by scenarios/crashpad_crash.py and built by check-crashpad.py
// against a Crashpad built outside this tree (nothing of Crashpad is here).
//
// pycore_crashpad_connect(SOCK, KEY, VALUE) does what an application that
// embeds Crashpad does at start-up, with the client API of
// client/crashpad_client.h and client/crashpad_info.h:
// - asks for "indirectly referenced memory" (CrashpadInfo's
//   gather_indirectly_referenced_memory, up to 4 MiB);
// - sets one module annotation (a SimpleStringDictionary) and one
//   annotation object (a StringAnnotation, registered in the process's
//   AnnotationList);
// - hands Crashpad the socket of a handler the test started with
//   --initial-client-fd (CrashpadClient::SetHandlerSocket), which installs
//   Crashpad's signal handlers: the crash that follows is written by the
//   handler, which reads this process through ptrace.
// Returns 0, or -1 when Crashpad refused the socket.
#include "client/annotation.h"
#include "client/annotation_list.h"
#include "client/crashpad_client.h"
#include "client/crashpad_info.h"
#include "client/simple_string_dictionary.h"

// The CrashpadInfo structure is found by the handler through the module's
// .note.crashpad.info ELF note.  The client library's GetCrashpadInfo()
// means to pull the object that holds the note into the link by a static
// pointer to CRASHPAD_NOTE_REFERENCE, but GCC 12 at -O2 keeps only that
// static's guard and drops the reference (the library's static archive
// then links no note): referenced here.
extern "C" int* CRASHPAD_NOTE_REFERENCE;

namespace {

volatile int* const keep_note = CRASHPAD_NOTE_REFERENCE;
crashpad::StringAnnotation<64> note("pycore-note");

}  // namespace

extern "C" int pycore_crashpad_connect(int sock, const char* key, const char* value) {
  crashpad::CrashpadInfo* info = crashpad::CrashpadInfo::GetCrashpadInfo();
  info->set_gather_indirectly_referenced_memory(crashpad::TriState::kEnabled, 4 << 20);
  auto* simple = new crashpad::SimpleStringDictionary();
  simple->SetKeyValue(key, value);
  info->set_simple_annotations(simple);
  crashpad::AnnotationList::Register();
  note.Set(value);
  auto* client = new crashpad::CrashpadClient();
  return client->SetHandlerSocket(crashpad::ScopedFileHandle(sock), -1) ? 0 : -1;
}
