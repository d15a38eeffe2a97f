//===- ZeroToRuntime.h - zero collectives as runtime calls -----*- C++ -*-===//
#ifndef ZERO_OPT_CONVERSION_ZEROTORUNTIME_ZEROTORUNTIME_H
#define ZERO_OPT_CONVERSION_ZEROTORUNTIME_ZEROTORUNTIME_H

namespace mlir {
class ConversionTarget;
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace mlir::zero {
/// `!zero.request` becomes the runtime's i64 handle; other types stay.
void populateZeroToRuntimeTypeConversions(TypeConverter &converter);
/// One pattern per op: starts, waits, synchronous buffer collectives, rank
/// queries, bucket packs and unpacks. The module must declare the runtime
/// functions they call (lookupOrDeclareRuntimeFunction).
void populateZeroToRuntimeConversionPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns);
/// Marks those ops illegal, and what they become legal.
void configureZeroToRuntimeTarget(ConversionTarget &target);
} // namespace mlir::zero

#endif
