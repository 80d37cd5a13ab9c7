#include "naa/sim/naa.hpp"

#include "naa/sim/block_factory.hpp"
#include "naa/sim/builtin_handler_images.hpp"
#include "naa/sim/hpu_handler.hpp"

namespace naa::sim {

// The MR table's two interfaces, forwarded to the MrTable block (whose own API belongs to the MR
// table's golden-model work): the timed check for the Transport, programming for the MRSP
// handler.
class Naa::MrTablePorts final : public RemoteAccessCheck, public MrRegistration {
 public:
  explicit MrTablePorts(MrTable& table) : table_(table) {}
  [[nodiscard]] MrCheck check(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                              std::uint8_t access, std::uint32_t qpn) override {
    return table_.check(rkey, va, len, access, qpn);
  }
  [[nodiscard]] std::optional<std::size_t> free_index() const override {
    return table_.free_index();
  }
  [[nodiscard]] std::size_t free_count() const override { return table_.free_count(); }
  [[nodiscard]] std::size_t owned_count(std::uint32_t qpn) const override {
    return table_.owned_count(qpn);
  }
  void program(std::size_t index, const MrEntry& entry) override {
    table_.table().program(index, entry);
  }
  void invalidate_owner(std::uint32_t qpn) override { table_.invalidate_owner(qpn); }

 private:
  MrTable& table_;
};

Naa::Naa(sc_core::sc_module_name name, const SimConfig& cfg, const Log& log, PeerTimers& timers,
         boost::asio::io_context& io, KernelRegistry registry)
    : sc_module(name),
      cfg_(cfg),
      rng_(cfg.seed),
      qps_(cfg.qps),
      pool_(4096),
      ctx_{cfg, log, pool_, timers, rng_, cfg.seed ? *cfg.seed : os_random_u64(), qps_} {
  if (cfg.qps == 0 || cfg.qps > 256) model_fatal("naa", "--qps must be 1..256");
  // The MR table is the golden model of rtl/mr_table: 32 entries, indexed by rkey[4:0].
  if (cfg.mr_entries == 0 || cfg.mr_entries > 32) model_fatal("naa", "MR entries must be 1..32");
  mem_ = std::make_unique<Memory>("memory", cfg);
  // Blocks that also exist as RTL: the program's implementations (model, RTL or lockstep), if it
  // gave a factory; else the C++ models.
  if (cfg.blocks) cfg.blocks->install_kernels(registry, cfg);
  mr_ = std::make_unique<MrTable>("mr_table", cfg,
                                  cfg.blocks ? cfg.blocks->make_mr_table(cfg) : nullptr);
  net_ = std::make_unique<NetPort>("net_port", ctx_, io);
  rx_ = std::make_unique<RxPipe>("rx_pipe", ctx_,
                                 cfg.blocks ? cfg.blocks->make_rx_checks(cfg) : nullptr);
  cm_ = std::make_unique<CmAgent>("cm_agent", ctx_);
  transport_ = std::make_unique<Transport>("transport", ctx_);
  mrsp_ = std::make_unique<MrspHandler>("mrsp_handler", ctx_);
  kernels_ = std::make_unique<KernelEngine>("kernel_engine", ctx_, std::move(registry));
  handlers_ = std::make_unique<HandlerEngine>("handler_engine", ctx_, handler_registry(),
                                              kernels_->registry());
  handlers_->set_image_loader(
      [this](std::span<const std::uint8_t> image) { return load_installed_image(image); });
  tx_ = std::make_unique<TxPipe>("tx_pipe", ctx_);
  mr_ports_ = std::make_unique<MrTablePorts>(*mr_);
  bind_ports();
}

// Every port of every block, bound once (docs/sim/architecture.md has the same table as a
// diagram). A block that gains another implementation (an RTL twin) is rebound here, and only
// here.
void Naa::bind_ports() {
  net_->to_rx(*rx_);
  net_->protocol_errors(*rx_);

  rx_->tap(*net_);
  rx_->to_cm(*cm_);
  rx_->to_transport(*transport_);

  cm_->to_tx(*tx_);
  cm_->transport(*transport_);
  cm_->regions(*mrsp_);
  cm_->calls(*kernels_);
  cm_->addresses(*net_);
  cm_->protocol_errors(*rx_);

  transport_->to_tx(*tx_);
  transport_->cm(*cm_);
  transport_->messages(*mrsp_);
  transport_->calls(*kernels_);
  transport_->access(*mr_ports_);
  transport_->mem.bind_memory(*mem_, mem_->socket);

  mrsp_->sends(*transport_);
  mrsp_->receives(*transport_);
  mrsp_->mr(*mr_ports_);
  mrsp_->scrub(*mem_);
  mrsp_->handlers(*handlers_);

  kernels_->directory(*mrsp_);
  kernels_->sends(*transport_);
  // One TLM target, several initiators: each initiator socket binds to the target socket. The
  // simple_target_socket accepts one binding, so the kernel engine reaches memory through its
  // own socket on a second target port (see Memory).
  kernels_->mem.bind_memory(*mem_, mem_->kernel_socket);

  // Streaming handlers (docs/sim/handler_engine.md): STREAM regions' payload and their calls.
  transport_->streams(*handlers_);
  handlers_->directory(*mrsp_);
  handlers_->sends(*transport_);
  handlers_->mem.bind_memory(*mem_, mem_->handler_socket);

  tx_->addresses(*net_);
  tx_->to_net(*net_);
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
  handlers_->report(os);
  for (const HpuHandler* h : hpu_handlers_) {
    const std::string key = "hpu.fn" + std::to_string(h->function_code());
    os << key << ".invocations=" << h->invocations() << '\n'
       << key << ".cycles=" << h->cycles() << '\n'
       << key << ".traps=" << h->traps() << '\n';
  }
  for (const HpuHandler* h : builtin_hpu_handlers_) {
    if (h->invocations() == 0) continue;  // sparse: a run without streaming calls is unchanged
    const std::string key = "hpu.fn" + std::to_string(h->function_code());
    os << key << ".invocations=" << h->invocations() << '\n'
       << key << ".cycles=" << h->cycles() << '\n'
       << key << ".traps=" << h->traps() << '\n';
  }
  tx_->report(os);
  if (cfg_.blocks) cfg_.blocks->report(os);
  os << "packet_pool.available=" << pool_.available() << '\n'
     << "packet_pool.exhausted=" << pool_.exhausted() << '\n';
}

// The built-in handlers, and --handler's images on the HPU cores (docs/spin.md). The cores also
// run the images hosts install with their connection (docs/protocol.md "Handler images").
HandlerRegistry Naa::handler_registry() {
  HandlerRegistry registry = HandlerRegistry::with_builtins();
  std::vector<std::unique_ptr<rtl::HpuPort>> cores;
  for (std::uint32_t i = 0; i < cfg_.hpus; ++i) {
    auto core = cfg_.blocks ? cfg_.blocks->make_hpu(cfg_, i) : nullptr;
    cores.push_back(core ? std::move(core) : std::make_unique<rtl::HpuModel>());
  }
  hpu_cores_ = std::make_shared<HpuCores>(std::move(cores));
  const std::shared_ptr<HpuCores>& shared = hpu_cores_;
  const std::uint64_t max_cycles = hpu_max_cycles();
  // The built-ins in C replace the C++ classes, which stay as their oracles (docs/spin.md).
  for (const BuiltinHandlerImage& image : cfg_.builtin_handlers_in_c
                                              ? builtin_handler_images()
                                              : std::span<const BuiltinHandlerImage>()) {
    auto loaded = HpuHandler::load(image.bytes, image.name, shared, max_cycles);
    if (!loaded.handler)
      model_fatal("naa", std::string("built-in ") + image.name + ": " + loaded.message);
    builtin_hpu_handlers_.push_back(loaded.handler.get());
    registry.register_handler(std::move(loaded.handler));
  }
  for (const HandlerImageFile& image : cfg_.handler_images) {
    auto loaded = HpuHandler::load(image.bytes, image.name, shared, max_cycles);
    if (!loaded.handler) model_fatal("naa", "--handler " + image.name + ": " + loaded.message);
    if (registry.find(loaded.handler->function_code()) != nullptr) {
      model_fatal("naa", "--handler " + image.name + ": function code " +
                             std::to_string(loaded.handler->function_code()) + " is taken");
    }
    hpu_handlers_.push_back(loaded.handler.get());
    registry.register_handler(std::move(loaded.handler));
  }
  return registry;
}

std::uint64_t Naa::hpu_max_cycles() const {
  // The watchdog's limit (HandlerEngine::watchdog): the smaller of the two that are set.
  std::uint64_t max_cycles = kHpuDefaultMaxCycles;
  for (const std::uint64_t limit : {cfg_.hpu_max_cycles, cfg_.kernel_timeout_cycles}) {
    if (limit != 0) max_cycles = std::min(max_cycles, limit);
  }
  return max_cycles;
}

LoadedImage Naa::load_installed_image(std::span<const std::uint8_t> image) {
  auto loaded = HpuHandler::load(image, "installed", hpu_cores_, hpu_max_cycles());
  LoadedImage out;
  out.mrsp_error = loaded.handler ? 0 : mrsp_error_of(loaded.error);
  out.message = std::move(loaded.message);
  out.handler = std::move(loaded.handler);
  return out;
}

void Naa::report_activity(std::ostream& os, std::uint64_t sc_start_calls) const {
  const std::uint64_t deltas = sc_core::sc_delta_count();
  // SystemC 2.3 bumps the change stamp once per delta cycle and once per advance of time.
  const std::uint64_t stamps = sc_core::sc_get_curr_simcontext()->change_stamp();
  const std::uint64_t timed = stamps > deltas ? stamps - deltas : 0;
  const std::uint64_t datagrams = net_->rx_datagram_count() + net_->tx_datagram_count();
  const std::uint64_t calls = kernels_->dispatches();
  auto per = [](std::uint64_t n, std::uint64_t d) {
    return d == 0 ? 0.0 : static_cast<double>(n) / static_cast<double>(d);
  };
  os << "activity.delta_cycles=" << deltas << '\n'
     << "activity.time_steps=" << timed << '\n'
     << "activity.sc_start_calls=" << sc_start_calls << '\n'
     << "activity.datagrams=" << datagrams << '\n'
     << "activity.delta_cycles_per_datagram=" << per(deltas, datagrams) << '\n'
     << "activity.time_steps_per_datagram=" << per(timed, datagrams) << '\n'
     << "activity.sc_start_calls_per_datagram=" << per(sc_start_calls, datagrams) << '\n'
     << "activity.delta_cycles_per_call=" << per(deltas, calls) << '\n'
     << "activity.sc_start_calls_per_call=" << per(sc_start_calls, calls) << '\n';
}

}  // namespace naa::sim
