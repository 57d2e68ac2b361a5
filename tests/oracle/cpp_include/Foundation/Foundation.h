// A stand-in for Apple's <Foundation/Foundation.h>, written for the oracle: it declares only
// what the Objective-C++ fixtures (fixtures/cpp/GL101/TorchModule.mm,
// fixtures/cpp/GL405/torch_module_predict.mm and their fixed goldens) use, with Foundation's
// signatures, so that clang checks both as the iOS SDK would. Nothing here is ever run.
#pragma once

#include <stddef.h>

typedef unsigned long NSUInteger;
#define nil nullptr  // as <objc/objc.h> defines it in C++11

__attribute__((objc_root_class))
@interface NSObject {
  Class isa;
}
+ (instancetype)alloc;
- (instancetype)init;
- (id)copy;
@end

@interface NSString : NSObject
@property(readonly) const char* UTF8String;
@end

@interface NSNumber : NSObject
+ (NSNumber*)numberWithFloat:(float)value;  // `@(values[i])` on a float
@end

@interface NSArray<__covariant ObjectType> : NSObject
- (ObjectType)objectAtIndexedSubscript:(NSUInteger)index;  // `labels[best]`
@end

@interface NSMutableArray<ObjectType> : NSArray<ObjectType>
+ (instancetype)arrayWithCapacity:(NSUInteger)capacity;
- (void)addObject:(ObjectType)object;
@end

extern "C" void NSLog(NSString* format, ...);
