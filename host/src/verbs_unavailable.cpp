// The Verbs backend when this build has no rdma-core (NAA_WITH_VERBS=OFF, or libibverbs-dev /
// librdmacm-dev missing): open_verbs() answers "not supported" (STYLE.md: rdma-core's habit for
// operations a provider lacks) instead of the symbol being absent.
#include "naa/host/error.hpp"
#include "naa/host/verbs.hpp"

namespace naa::host {

bool verbs_built() noexcept {
  return false;
}

std::shared_ptr<Transport> open_verbs(const VerbsOptions& /*options*/, std::error_code& ec,
                                      std::string* detail) {
  ec = Errc::not_supported;
  if (detail != nullptr) {
    *detail =
        "this build has no Verbs backend (configure with libibverbs-dev and librdmacm-dev "
        "installed, NAA_WITH_VERBS=AUTO or ON)";
  }
  return nullptr;
}

}  // namespace naa::host
