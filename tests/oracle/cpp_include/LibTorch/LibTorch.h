// A stand-in for the LibTorch(-Lite) pod's umbrella header <LibTorch/LibTorch.h>, written
// for the oracle: the pod's header includes the TorchScript API, which is all the
// Objective-C++ fixtures use of it.
#pragma once

#include <torch/script.h>
