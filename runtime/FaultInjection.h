//===- FaultInjection.h - kill the process at a named point, for tests -*- C++ -*-===//
//
// Crash-safety tests (test/reliability/) must kill a run exactly where a
// crash hurts most: half-way through writing a checkpoint or a spill file.
// Code that writes such files calls faultPoint("checkpoint") / ("spill")
// between the halves of the write. With SAGA_KILL_AT=POINT:N in the
// environment, the N-th call at POINT (from 1) sends the process SIGKILL;
// otherwise a call costs one relaxed atomic load.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_FAULTINJECTION_H
#define SAGA_RUNTIME_FAULTINJECTION_H

namespace saga {

void faultPoint(const char *point);

} // namespace saga

#endif // SAGA_RUNTIME_FAULTINJECTION_H
