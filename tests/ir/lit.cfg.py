# lit configuration for the golden IR tests: each *.ir file carries RUN lines (lt-opt | FileCheck).
import os
import lit.formats

config.name = "lazytrain-ir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lt_build_dir, "tests", "ir")
config.environment["PATH"] = os.pathsep.join(
    [os.path.join(config.lt_build_dir, "tools"), config.llvm_tools_dir, config.environment.get("PATH", "")])
