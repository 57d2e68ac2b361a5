// The project header fixtures/cpp/GL101/TorchModule.mm and fixtures/cpp/GL405/
// torch_module_predict.mm import, written for the oracle: the class only (each fixture's
// @implementation defines its own methods, which Objective-C allows without declarations).
#pragma once

#import <Foundation/Foundation.h>

@interface TorchModule : NSObject
@end
