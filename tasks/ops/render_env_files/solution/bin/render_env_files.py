"""Write $ROOT/etc/<service>/<service>.env (KEY=VALUE, sorted, mode 0640) from services.ini:
[DEFAULT] values apply to every service unless the service sets them."""
import configparser
import os
import sys

root = sys.argv[1]
config = configparser.ConfigParser(interpolation=None)
config.optionxform = str
config.read(os.path.join(root, "etc", "services.ini"))
for service in config.sections():
    folder = os.path.join(root, "etc", service)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{service}.env")
    values = dict(config[service])
    with open(path, "w") as f:
        f.write("".join(f"{k.upper()}={values[k]}\n" for k in sorted(values, key=str.upper)))
    os.chmod(path, 0o640)
