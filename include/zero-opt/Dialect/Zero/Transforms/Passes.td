//===- Passes.td - zero dialect transforms -----------------*- tablegen -*-===//
#ifndef ZERO_OPT_DIALECT_ZERO_TRANSFORMS_PASSES
#define ZERO_OPT_DIALECT_ZERO_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def ZeroBuildTrainStep : Pass<"zero-build-train-step", "ModuleOp"> {
  let summary = "Build the training step from a forward function with a loss";
  let description = [{
    From the forward function `func` (loss = the result named `loss`, else
    the first scalar floating-point result), builds `<func>_grad`, returning
    the loss and `zero.gradient` of it with respect to every parameter, and
    `train_step`, which:

    1. runs `<func>_grad` on each of `accumulation` micro-batches (rows
       `[j*b, (j+1)*b)` of each input) and averages losses and gradients;
    2. computes the global gradient norm and, with `clip` > 0, scales the
       gradients by `min(1, clip / (norm + 1e-6))`;
    3. updates every parameter with a `zero` optimizer op; optimizer state
       tensors are arguments with `zero.role<optimizer_state>`.

    Updated parameters and states are returned as results marked
    `zero.updates = <argument index>`, so bufferization writes them in place.
    The learning rate and the 1-based step count are `tensor<f32>`
    arguments named `lr` and `step`.
  }];
  let options = [
    Option<"funcName", "func", "std::string", "\"main\"", "Forward function">,
    Option<"lossName", "loss", "std::string", "\"\"",
           "Name of the loss result (default: first scalar float result)">,
    Option<"optimizer", "optimizer", "std::string", "\"adamw\"",
           "adamw, adam, sgd or adagrad">,
    Option<"beta1", "beta1", "double", "0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", "0.999", "Adam beta2">,
    Option<"eps", "eps", "double", "1e-8", "Adam / Adagrad epsilon">,
    Option<"weightDecay", "weight-decay", "double", "0.0", "Weight decay">,
    Option<"momentum", "momentum", "double", "0.0", "SGD momentum">,
    Option<"dampening", "dampening", "double", "0.0", "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", "false", "SGD Nesterov momentum">,
    Option<"lrDecay", "lr-decay", "double", "0.0", "Adagrad lr decay">,
    Option<"initialAccumulator", "initial-accumulator", "double", "0.0",
           "Adagrad initial accumulator value">,
    Option<"accumulation", "accumulation", "int64_t", "1",
           "Micro-batches per optimizer step">,
    Option<"clip", "clip", "double", "0.0",
           "Clip gradients to this global norm (0: off)">,
  ];
  let dependentDialects = ["mlir::zero::ZeroDialect", "mlir::scf::SCFDialect",
                           "mlir::tosa::TosaDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

def ZeroExpandGradients : Pass<"zero-expand-gradients", "func::FuncOp"> {
  let summary = "Replace zero.gradient with the backward computation";
  let description = [{
    Reverse-mode differentiation through the ops' AutoDiffOpInterface
    rules. Backward ops carry `zero.backward`; forward values the backward
    does not read are left to die.
  }];
  let dependentDialects = ["mlir::tosa::TosaDialect", "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def ZeroLowerOptimizers : Pass<"zero-lower-optimizers", "func::FuncOp"> {
  let summary = "Lower zero optimizer ops to fused elementwise linalg";
  let description = [{
    Each update becomes one `linalg.generic` that reads the parameter,
    gradient and states once and writes the parameter and states into their
    own tensors, so bufferization performs the update in place.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::tensor::TensorDialect"];
}

#endif
