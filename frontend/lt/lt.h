// Everything a training program needs: #include <lt/lt.h>.
#pragma once
#include "lt/autograd.h"
#include "lt/ops.h"
#include "lt/options.h"
#include "lt/serialize.h"
#include "lt/tensor.h"
#include "lt/threads.h"
