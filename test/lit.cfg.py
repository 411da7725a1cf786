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
