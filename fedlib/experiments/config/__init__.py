"""What a run is: the typed :class:`RunConfig` (``run_config``), the named presets and their YAML
(``presets``), what an override touches (``overrides``) and the algorithm registry (``registry``).

    from fedlib.experiments.config import RunConfig, list_presets, register_algorithm
"""

from fedlib.experiments.config.presets import (PRESET_DIR, TASKS, list_presets, load_preset_dict,
                                               load_yaml_file, overlay_overrides, preset_description,
                                               profile_overlay)
from fedlib.experiments.config.registry import (AlgorithmEntry, algorithms, get_algorithm, paradigms,
                                                register_algorithm)
from fedlib.experiments.config.run_config import (DATA_PARADIGMS, LABEL_FIELDS, UNREAD_SECTIONS, DataConfig,
                                                  ModelConfig, ResolvedRun, RunConfig, SAFLConfig, SplitConfig,
                                                  omit_hash_defaults)

__all__ = [
    "DataConfig", "ModelConfig", "SAFLConfig", "SplitConfig", "RunConfig", "ResolvedRun",
    "DATA_PARADIGMS", "LABEL_FIELDS", "UNREAD_SECTIONS", "omit_hash_defaults",
    "PRESET_DIR", "TASKS", "list_presets", "load_preset_dict", "load_yaml_file", "overlay_overrides",
    "preset_description", "profile_overlay",
    "AlgorithmEntry", "algorithms", "get_algorithm", "paradigms", "register_algorithm",
]
