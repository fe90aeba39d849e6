"""Model files (ONNX + metadata json) shipped with the package; loaded with importlib.resources."""
