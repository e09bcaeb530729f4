// Times IREE's C++ signature parser on the signatures that fnabi's
// `signature_timing` example lists (one `name raw sip mangled` line each,
// read from the file named by the first argument), one line per
// operation and signature: `op/name ns allocations`. Run by
// scripts/bench-signature-vs-iree.sh, which alternates it with the Rust
// side; the operations mirror those of crates/fnabi-abi/examples/signature_timing.rs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "signature_parser.h"

static size_t g_allocs = 0;
void* operator new(size_t n) {
  ++g_allocs;
  void* p = malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }

using namespace iree;
struct Sig {
  std::string name;
  bool raw, sip;
  std::string s;
};
static std::vector<Sig> sigs;

static size_t walk(absl::string_view s) {
  SignatureParser p(s);
  size_t n = 0;
  while (!p.end_or_error()) {
    ++n;
    if (p.type() == SignatureParser::Type::kSpan && p.tag() != 'K') n += walk(p.sval());
    p.Next();
  }
  return n;
}

static long raw_visit(const std::string& s, bool* ok) {
  long acc = 0;
  RawSignatureParser p;
  auto v = [&acc](const RawSignatureParser::Description& d) {
    acc += static_cast<long>(d.type) + static_cast<long>(d.buffer.scalar_type);
    for (int x : d.dims) acc += x;
  };
  p.VisitInputs(s, v);
  p.VisitResults(s, v);
  *ok = !p.GetError();
  return acc;
}

struct CountVisitor {
  long n = 0;
  void IntegerKey(SipSignatureParser&, int k) { n += k; }
  void StringKey(SipSignatureParser&, absl::string_view k) { n += k.size(); }
  void OpenStruct(SipSignatureParser&, SipSignatureParser::StructType t) { n += 1 + (int)t; }
  void CloseStruct(SipSignatureParser&) { n += 1; }
  void MapToRawSignatureIndex(SipSignatureParser&, int i) { n += i; }
};

static long sip_visit(const std::string& s, bool* ok) {
  SipSignatureParser p;
  CountVisitor v;
  p.VisitInputs(v, s);
  p.VisitResults(v, s);
  *ok = !p.GetError();
  return v.n;
}

static size_t sip_text(const std::string& s, bool* ok) {
  SipSignatureParser p;
  SipSignatureParser::ToStringVisitor a, b;
  p.VisitInputs(a, s);
  p.VisitResults(b, s);
  *ok = !p.GetError();
  return a.s().size() + b.s().size();
}

static size_t human(const std::string& s, bool* ok) {
  RawSignatureParser p;
  auto r = p.FunctionSignatureToString(s);
  *ok = r.has_value();
  return r ? r->size() : 0;
}

volatile long sink;

static const char* g_filter = "";
template <typename F>
static void bench(const char* op, const Sig& sig, F f) {
  bool ok = true;
  std::string id = std::string(op) + "/" + sig.name;
  if (id.find(g_filter) == std::string::npos) return;
  if (const char* it = getenv("ITERS")) {
    long n = atol(it);
    for (long i = 0; i < n; ++i) sink = (long)f(sig.s, &ok);
    return;
  }
  // Calibrate to ~20 ms a round.
  size_t iters = 1;
  for (;;) {
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < iters; ++i) sink = (long)f(sig.s, &ok);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (dt > 0.02) break;
    iters *= 2;
  }
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < iters; ++i) sink = (long)f(sig.s, &ok);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rounds.push_back(dt * 1e9 / iters);
  }
  std::sort(rounds.begin(), rounds.end());
  size_t a0 = g_allocs;
  sink = (long)f(sig.s, &ok);
  size_t allocs = g_allocs - a0;
  if (!ok) {
    fprintf(stderr, "%s: the reference parser reported an error\n", id.c_str());
    exit(1);
  }
  printf("%s %.1f %zu\n", id.c_str(), rounds[2], allocs);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: driver SIGNATURES [FILTER]\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    Sig sig;
    int raw = 0, sip = 0;
    if (fields >> sig.name >> raw >> sip >> sig.s) {
      sig.raw = raw != 0;
      sig.sip = sip != 0;
      sigs.push_back(sig);
    }
  }
  if (sigs.empty()) {
    fprintf(stderr, "no signatures in %s\n", argv[1]);
    return 2;
  }
  if (argc > 2) g_filter = argv[2];
  for (auto& s : sigs) bench("walk", s, [](const std::string& x, bool*) { return walk(x); });
  for (auto& s : sigs)
    if (s.raw) bench("raw_read", s, raw_visit);
  for (auto& s : sigs)
    if (s.raw) bench("raw_human", s, human);
  for (auto& s : sigs)
    if (s.sip) bench("sip_visit", s, sip_visit);
  for (auto& s : sigs)
    if (s.sip) bench("sip_text", s, sip_text);
  return 0;
}
