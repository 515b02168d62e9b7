"""docs/PYTHON.md's first program runs as shown and learns, eagerly and lazily."""
import os
import re
import subprocess
import sys

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "PYTHON.md")


def test_first_program_trains_in_both_modes():
    text = open(DOC).read()
    program = re.search(r"## A first program.*?```python\n(.*?)```", text, re.S)[1]
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == ["eager", "lazy"], out.stdout
    for line in lines:
        accuracy = float(line.split()[-1])
        assert accuracy > 0.85, line
