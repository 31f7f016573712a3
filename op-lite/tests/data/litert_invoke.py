"""Runs a one-input, one-output model in LiteRT: shared by make_models.py
and check_written.py (both beside this file)."""


def invoke(interpreter, inputs):
    """Resizes the input to `inputs`' shape if need be, runs the model and
    returns its output."""
    (input_detail,) = interpreter.get_input_details()
    (output_detail,) = interpreter.get_output_details()
    if list(input_detail["shape"]) != list(inputs.shape):
        interpreter.resize_tensor_input(input_detail["index"], inputs.shape)
    interpreter.allocate_tensors()
    interpreter.set_tensor(input_detail["index"], inputs)
    interpreter.invoke()
    return interpreter.get_tensor(output_detail["index"])
