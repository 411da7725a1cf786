# lit configuration for Saga: .mlir and .saga files under test/.
import os
import lit.formats

config.name = "Saga"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".saga", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "unit", "fuzz", "Inputs"]
config.test_source_root = os.path.join(config.saga_src_root, "test")
config.test_exec_root = os.path.join(config.saga_obj_root, "test")

config.environment["PATH"] = os.pathsep.join(
    [config.saga_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%examples", os.path.join(config.saga_src_root, "examples")))

# The CPU-backed stand-in for the CUDA driver, NVRTC and cuBLAS
# (emulator/driver): tests that run the CUDA executor on the emulated GPU
# need it (it is built when the toolkit's headers are found).
standin = os.path.join(config.saga_obj_root, "standin", "libsaga-cuda-standin.so")
if os.path.exists(standin):
    config.available_features.add("cuda-standin")
    config.substitutions.append(
        ("%cuda_standin_env",
         "env SAGA_CUDA_DRIVER={0} SAGA_NVRTC={0} SAGA_CUBLAS={0} "
         "SAGA_CUDA_CACHE={1}".format(
             standin, os.path.join(config.saga_obj_root, "test-scratch", "cuda-cache"))))

# nvcc (the CUDA toolkit's compiler): the emitted .cu must compile with it too.
import shutil
if shutil.which("nvcc"):
    config.available_features.add("nvcc")
