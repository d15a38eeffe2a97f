//===- Reports.h - what the compiler tells about a planned step -*- C++ -*-===//
//
// The memory table (--report=memory) and the predicted timeline
// (--report=timeline) of a module whose step functions were planned.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DRIVER_REPORTS_H
#define ZERO_OPT_DRIVER_REPORTS_H

#include "zero-opt/Driver/Pipeline.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::zero {

/// The per-rank memory table of each step function of a planned module.
void printMemoryReport(llvm::raw_ostream &os, ModuleOp planned,
                       const CompileOptions &options);

/// Simulates the planned step functions on options.hardware (module
/// attribute zero.timeline) and keeps the predicted trace in
/// options.timelineEvents.
LogicalResult predictTimeline(ModuleOp planned, CompileOptions &options);

/// The predicted step time, exposed communication and MFU of each step
/// function of a module predictTimeline ran on.
void printTimelineReport(llvm::raw_ostream &os, ModuleOp planned,
                         const CompileOptions &options);

} // namespace mlir::zero

#endif
