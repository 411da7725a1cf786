//===- SagaLibrary.cpp - libsaga.so, the C++ API for other projects -------===//
//
// Empty: libsaga.so is Saga's static libraries linked whole (see
// runtime/CMakeLists.txt), so that a program linking it finds every symbol
// of the C++ API (api/Model.h, the trainer, the loaders).
//
//===----------------------------------------------------------------------===//
