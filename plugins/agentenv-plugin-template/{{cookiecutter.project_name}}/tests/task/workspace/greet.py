def greet(name):
    # TODO: greet by name
    return "Hello!"
