// Modules in the style of PyTorch's torch::nn (namespace lt::nn): the Module base with named
// parameters, buffers, submodules and state dicts, the layers, and initialization schemes.
// docs/TRAINING.md shows a training loop with them.
#pragma once
#include "lt/nn/activation.h"
#include "lt/nn/attention.h"
#include "lt/nn/container.h"
#include "lt/nn/conv.h"
#include "lt/nn/init.h"
#include "lt/nn/linear.h"
#include "lt/nn/module.h"
#include "lt/nn/module_list.h"
#include "lt/nn/norm.h"
#include "lt/nn/rnn.h"
#include "lt/nn/transformer.h"
