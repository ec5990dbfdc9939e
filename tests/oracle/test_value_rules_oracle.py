"""accelerate's own loader, the oracle of the value rules' reading of distributed_type and mixed_precision."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.oracle
def test_accelerate_itself_refuses_a_lowercase_distributed_type(tmp_path: Any) -> None:
    config_args = pytest.importorskip("accelerate.commands.config.config_args", reason="accelerate not installed")
    path = tmp_path / "c.yaml"
    path.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: multi_gpu\nnum_processes: 2\n")
    with pytest.raises(ValueError, match="not a valid DistributedType"):
        config_args.load_config_from_file(str(path))
    path.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: BF16\n")
    assert config_args.load_config_from_file(str(path)).mixed_precision == "BF16"  # lower-cased at launch
