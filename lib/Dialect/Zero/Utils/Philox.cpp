//===- Philox.cpp - the counter-based draws of dropout masks ----*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Utils/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

#include <array>
#include <cmath>

using namespace mlir;

namespace {
/// Philox4x32-10 on i32 values or vectors of them (the shape of `like`).
struct Philox {
  OpBuilder &b;
  Location loc;
  Type like;

  /// `t` with `like`'s shape.
  Type shaped(Type t) {
    if (auto v = dyn_cast<VectorType>(like))
      return v.clone(t);
    return t;
  }
  Value constant(unsigned width, uint64_t v) {
    Type t = shaped(b.getIntegerType(width));
    TypedAttr attr = b.getIntegerAttr(b.getIntegerType(width), v);
    if (auto vt = dyn_cast<VectorType>(t))
      attr = SplatElementsAttr::get(vt, attr);
    return arith::ConstantOp::create(b, loc, attr);
  }
  Value i32(uint32_t v) { return constant(32, v); }
  /// (hi, lo) halves of the 64-bit product m * x.
  std::pair<Value, Value> mulhilo(uint32_t m, Value x) {
    Type i64 = shaped(b.getI64Type()), i32t = shaped(b.getI32Type());
    Value m64 = constant(64, m);
    Value x64 = arith::ExtUIOp::create(b, loc, i64, x);
    Value p = arith::MulIOp::create(b, loc, m64, x64);
    Value hi = arith::ShRUIOp::create(b, loc, p, constant(64, 32));
    return {arith::TruncIOp::create(b, loc, i32t, hi),
            arith::TruncIOp::create(b, loc, i32t, p)};
  }
  Value xor3(Value a, Value c, uint32_t k) {
    return arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, a, c),
                                 i32(k));
  }
  /// The first output word for counter `c` and key (k0, k1).
  Value first(std::array<Value, 4> c, uint32_t k0, uint32_t k1) {
    for (int round = 0; round < 10; ++round) {
      auto [hi0, lo0] = mulhilo(0xD2511F53u, c[0]);
      auto [hi1, lo1] = mulhilo(0xCD9E8D57u, c[2]);
      c = {xor3(hi1, c[1], k0), lo1, xor3(hi0, c[3], k1), lo0};
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    return c[0];
  }
};
} // namespace

uint32_t mlir::zero::dropoutKeepThreshold(double ratio) {
  return uint32_t(std::llround((1.0 - ratio) * 16777216.0));
}

Value mlir::zero::buildDropoutKeep(OpBuilder &b, Location loc, Value elem,
                                   Value row, Value step, uint64_t seed,
                                   uint32_t stream, uint32_t keep) {
  Philox p{b, loc, elem.getType()};
  Value w = p.first({elem, row, step, p.i32(stream)}, uint32_t(seed),
                    uint32_t(seed >> 32));
  Value bits = arith::ShRUIOp::create(b, loc, w, p.i32(8));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, bits,
                               p.i32(keep));
}
