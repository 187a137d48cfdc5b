// Binding a function of a library opened with dlopen: the refresh loads libcurl and libcrypto
// only when it runs, so that no other command pays for their symbol binding at start-up.
#ifndef CLOUDFIT_REFRESH_DYNAMIC_SYMBOL_H_
#define CLOUDFIT_REFRESH_DYNAMIC_SYMBOL_H_

#include <dlfcn.h>

#include <string>

namespace cloudfit::refresh {

// Sets *fn to `symbol` of `handle`; when it is missing, appends its name to *missing (comma
// separated) and returns false.
template <typename Fn>
bool BindSymbol(void* handle, const char* symbol, Fn* fn, std::string* missing) {
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    *missing += (missing->empty() ? "" : ", ") + std::string(symbol);
    return false;
  }
  // POSIX guarantees that an object pointer from dlsym converts to a function pointer.
  *fn = reinterpret_cast<Fn>(address);
  return true;
}

}  // namespace cloudfit::refresh

#endif  // CLOUDFIT_REFRESH_DYNAMIC_SYMBOL_H_
