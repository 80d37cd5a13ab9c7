// libfabric's convention for the operations a provider lacks (include/ofi_enosys.h): every entry
// of every ops table points at a function that answers -FI_ENOSYS, never NULL, because the
// libfabric inlines (fi_open_ops, fi_control, fi_mr_bind, fi_cq_signal, ...) call through the table
// without looking. libfabric.so does not export its fi_no_* functions to external providers (only
// fi_getinfo, fi_param_*, fi_log and a few more), so this is their equivalent:
// FI_NO(fi_ops_domain, endpoint2) is a function of that entry's exact type answering -FI_ENOSYS
// (nullptr for the strerror entries, which return a string).
#pragma once

#include <rdma/fi_errno.h>

#include <type_traits>

namespace naa::ofi {

template <class Fn, int Error>
struct FiAnswer;

template <class R, class... A, int Error>
struct FiAnswer<R (*)(A...), Error> {
  static R op(A...) noexcept {
    if constexpr (std::is_pointer_v<R>) {
      return nullptr;
    } else {
      return static_cast<R>(-Error);
    }
  }
};

}  // namespace naa::ofi

// The -FI_ENOSYS function for entry `member` of libfabric ops table `table`.
#define FI_NO(table, member) (&::naa::ofi::FiAnswer<decltype(table::member), FI_ENOSYS>::op)
// The -FI_EOPBADSTATE function for that entry: a closed endpoint's tables (ep_cm.cpp ep_close).
#define FI_CLOSED(table, member) \
  (&::naa::ofi::FiAnswer<decltype(table::member), FI_EOPBADSTATE>::op)
