// Everything a training program needs: #include <lt/lt.h> (tensors, ops, autograd, lazy mode,
// modules, optimizers, loss scaling, data, checkpoints, settings, metrics), as libtorch's
// <torch/torch.h>.
#pragma once
#include "lt/autocast.h"
#include "lt/autograd.h"
#include "lt/checkpoint.h"
#include "lt/function.h"
#include "lt/ops.h"
#include "lt/options.h"
#include "lt/serialize.h"
#include "lt/tensor.h"
#include "lt/threads.h"
// After the basics, which these build on.
#include "lt/amp.h"
#include "lt/data.h"
#include "lt/data_loader.h"
#include "lt/dist.h"
#include "lt/lazy.h"
#include "lt/metrics.h"
#include "lt/nn.h"
#include "lt/optim.h"
