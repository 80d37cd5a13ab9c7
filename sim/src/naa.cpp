#include "naa/sim/naa.hpp"

#include "naa/sim/block_factory.hpp"

namespace naa::sim {

Naa::Naa(sc_core::sc_module_name name, const SimConfig& cfg, const Log& log, PeerTimers& timers,
         boost::asio::io_context& io, KernelRegistry registry)
    : sc_module(name),
      cfg_(cfg),
      rng_(cfg.seed),
      qps_(cfg.qps),
      pool_(4096),
      ctx_{cfg, log, pool_, timers, rng_, cfg.seed ? *cfg.seed : os_random_u64(), qps_} {
  if (cfg.qps == 0 || cfg.qps > 256) model_fatal("naa", "--qps must be 1..256");
  if (cfg.mr_entries == 0 || cfg.mr_entries > 256) model_fatal("naa", "MR entries must be 1..256");
  mem_ = std::make_unique<Memory>("memory", cfg);
  // Blocks that also exist as RTL: the program's implementations (model, RTL or lockstep), if it
  // gave a factory; else the C++ models.
  if (cfg.blocks) cfg.blocks->install_kernels(registry, cfg);
  mr_ = std::make_unique<MrTable>("mr_table", cfg,
                                  cfg.blocks ? cfg.blocks->make_mr_table(cfg) : nullptr);
  net_ = std::make_unique<NetPort>("net_port", ctx_, io);
  rx_ = std::make_unique<RxPipe>("rx_pipe", ctx_);
  cm_ = std::make_unique<CmAgent>("cm_agent", ctx_);
  transport_ = std::make_unique<Transport>("transport", ctx_);
  mrsp_ = std::make_unique<MrspHandler>("mrsp_handler", ctx_);
  kernels_ = std::make_unique<KernelEngine>("kernel_engine", ctx_, std::move(registry));
  tx_ = std::make_unique<TxPipe>("tx_pipe", ctx_);
  ctx_.blocks = Blocks{net_.get(),  rx_.get(),  cm_.get(),      transport_.get(), mr_.get(),
                       mrsp_.get(), mem_.get(), kernels_.get(), tx_.get()};
  transport_->mem.socket.bind(mem_->socket);
  // One TLM target, several initiators: each initiator socket binds to the target socket. The
  // simple_target_socket accepts one binding, so the kernel engine reaches memory through its
  // own socket on a second target port (see Memory).
  kernels_->mem.socket.bind(mem_->kernel_socket);
}

Naa::~Naa() = default;

void Naa::report(std::ostream& os) const {
  net_->report(os);
  rx_->report(os);
  cm_->report(os);
  transport_->report(os);
  mr_->report(os);
  mrsp_->report(os);
  mem_->report(os);
  kernels_->report(os);
  tx_->report(os);
  if (cfg_.blocks) cfg_.blocks->report(os);
  os << "packet_pool.available=" << pool_.available() << '\n'
     << "packet_pool.exhausted=" << pool_.exhausted() << '\n';
}

}  // namespace naa::sim
