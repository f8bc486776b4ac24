"""LogConfig declares one typed attribute per topic config of the definitions table."""
import dataclasses

from pykbroker.config.definitions import TOPIC_CONFIGS
from pykbroker.config.types import ConfigType
from pykbroker.log import LogConfig
from pykbroker.log.config import attribute_of

# The Python type of a parsed value of each config type (lists are stored as tuples)
PYTHON_TYPES = {
    ConfigType.BOOLEAN: "bool",
    ConfigType.SHORT: "int",
    ConfigType.INT: "int",
    ConfigType.LONG: "int",
    ConfigType.DOUBLE: "float",
    ConfigType.STRING: "str",
    ConfigType.LIST: "tuple[str, ...]",
}


def declared_fields():
    return [field for field in dataclasses.fields(LogConfig) if field.name != "extra"]


def test_the_declared_attributes_are_the_topic_configs_in_the_table_order():
    assert [field.name for field in declared_fields()] == [attribute_of(key) for key in TOPIC_CONFIGS]


def test_each_attribute_is_declared_with_the_type_of_its_config():
    definitions = {attribute_of(key): definition for key, definition in TOPIC_CONFIGS.items()}
    assert {field.name: field.type for field in declared_fields()} == {
        name: PYTHON_TYPES[definition.type] for name, definition in definitions.items()
    }


def test_each_default_is_the_table_default():
    config = LogConfig()
    for key, definition in TOPIC_CONFIGS.items():
        default = tuple(definition.default) if isinstance(definition.default, list) else definition.default
        assert getattr(config, attribute_of(key)) == default, key


def test_parsed_values_have_the_declared_types():
    config = LogConfig.from_dict({key: d.format(d.default) for key, d in TOPIC_CONFIGS.items()})
    types = {"bool": bool, "int": int, "float": float, "str": str, "tuple[str, ...]": tuple}
    for field in declared_fields():
        assert isinstance(getattr(config, field.name), types[field.type]), field.name
