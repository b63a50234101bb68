'''python-dbusmock template: the parts of bluetoothd (org.bluez) the Burrow mesh uses.

Run as `/usr/bin/python3 -m dbusmock --template bluez_mesh_template.py -p '{"adapters": ["hci0"]}'`
on a private bus (DBUS_SYSTEM_BUS_ADDRESS). Parameters: "adapters" (default ["hci0"]; [] for
none), "powered" (default true), "powerable" (default true; false: setting Powered fails as with
rfkill), "adapter_delay_ms" (default 0: the adapters exist when the name is taken; more: they
appear that much later, as a restarted bluetoothd's do once the kernel reports them).

Like bluetoothd it
* exports Adapter1 + GattManager1 + LEAdvertisingManager1 on /org/bluez/hciN;
* on RegisterApplication reads the application's GetManagedObjects, on RegisterAdvertisement
  the advertisement's properties (GetAll), and keeps both;
* adds remote devices (AddNode) whose Connect brings up a GATT service with the mesh
  characteristics; AcquireWrite/AcquireNotify hand over SOCK_SEQPACKET sockets.

The test drives it through org.burrow.BlueZMock on / : it reads what was registered, plays a
remote central against our GATT application (WriteValue, StartNotify, AcquireNotify) and a
remote peripheral for our central role (sockets, notifications, disconnects).
'''

import os
import socket

import dbus
from gi.repository import GLib

from dbusmock import OBJECT_MANAGER_IFACE, mockobject

BUS_NAME = 'org.bluez'
MAIN_OBJ = '/'
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

MOCK_IFACE = 'org.burrow.BlueZMock'
ADAPTER_IFACE = 'org.bluez.Adapter1'
DEVICE_IFACE = 'org.bluez.Device1'
GATT_MANAGER_IFACE = 'org.bluez.GattManager1'
ADV_MANAGER_IFACE = 'org.bluez.LEAdvertisingManager1'
SERVICE_IFACE = 'org.bluez.GattService1'
CHAR_IFACE = 'org.bluez.GattCharacteristic1'
ADV_IFACE = 'org.bluez.LEAdvertisement1'
PROPS_IFACE = 'org.freedesktop.DBus.Properties'

SERVICE_UUID = '3fbe0001-b015-4ed5-aa45-fcefd7872a63'
INBOUND_UUID = '3fbe0002-b015-4ed5-aa45-fcefd7872a63'
OUTBOUND_UUID = '3fbe0003-b015-4ed5-aa45-fcefd7872a63'

# Everything the test reads back, kept on the module (one mock per process).
STATE = {
    'app': None,            # (sender, path) of the registered GATT application
    'app_objects': {},      # its GetManagedObjects at registration
    'adv': None,            # (sender, path)
    'adv_props': {},        # its LEAdvertisement1 properties at the latest registration
    'adv_registrations': 0,
    'adv_unregistrations': 0,
    'calls': [],            # "Member path" of calls on adapters and devices, in order
    'notifications': [],    # (source, bytes) a remote central heard from our notify characteristic
    'central_fds': {},      # device → our (the remote central's) end of an AcquireNotify socket
    'nodes': {},            # device path → remote node state (our central role)
}


def log_call(member, path):
    STATE['calls'].append(f'{member} {path}')


def bus():
    '''The connection that owns org.bluez: bluetoothd calls applications from its own name.'''
    return mockobject.objects['/'].connection


def emit_changed(obj, iface, changed):
    obj.EmitSignal(PROPS_IFACE, 'PropertiesChanged', 'sa{sv}as', [iface, changed, []])


# dbusmock's own Properties.Set, which the one below wraps for every mock object.
_ORIGINAL_SET = mockobject.DBusMockObject.Set


@dbus.service.method(PROPS_IFACE, in_signature='ssv', out_signature='')
def Set(self, interface, name, value):
    '''As bluetoothd with the radio blocked by rfkill: powering an adapter on fails.'''
    if interface == ADAPTER_IFACE and name == 'Powered' and bool(value) and not STATE['powerable']:
        raise dbus.exceptions.DBusException('Blocked through rfkill', name='org.bluez.Error.Failed')
    return _ORIGINAL_SET(self, interface, name, value)


# --- the adapter (module-level methods with sender_keyword are attached to every mock object) ---

@dbus.service.method(GATT_MANAGER_IFACE, in_signature='oa{sv}', out_signature='', sender_keyword='sender')
def RegisterApplication(self, path, _options, sender=None):
    log_call('RegisterApplication', self.__dbus_object_path__)
    # bluetoothd reads the whole tree before it answers.
    root = bus().get_object(sender, path, introspect=False)
    objects = root.GetManagedObjects(dbus_interface=OBJECT_MANAGER_IFACE)
    services = [p for p, ifaces in objects.items() if SERVICE_IFACE in ifaces]
    if not services:
        raise dbus.exceptions.DBusException('no GATT service', name='org.bluez.Error.InvalidArguments')
    STATE['app'] = (sender, str(path))
    STATE['app_objects'] = objects


@dbus.service.method(GATT_MANAGER_IFACE, in_signature='o', out_signature='', sender_keyword='sender')
def UnregisterApplication(self, path, sender=None):
    log_call('UnregisterApplication', self.__dbus_object_path__)
    STATE['app'] = None


@dbus.service.method(ADV_MANAGER_IFACE, in_signature='oa{sv}', out_signature='', sender_keyword='sender')
def RegisterAdvertisement(self, path, _options, sender=None):
    log_call('RegisterAdvertisement', self.__dbus_object_path__)
    if STATE['adv'] is not None:
        raise dbus.exceptions.DBusException('already registered', name='org.bluez.Error.AlreadyExists')
    adv = bus().get_object(sender, path, introspect=False)
    STATE['adv_props'] = adv.GetAll(ADV_IFACE, dbus_interface=PROPS_IFACE)
    STATE['adv'] = (sender, str(path))
    STATE['adv_registrations'] += 1


@dbus.service.method(ADV_MANAGER_IFACE, in_signature='o', out_signature='', sender_keyword='sender')
def UnregisterAdvertisement(self, path, sender=None):
    log_call('UnregisterAdvertisement', self.__dbus_object_path__)
    if STATE['adv'] is None:
        raise dbus.exceptions.DBusException('not registered', name='org.bluez.Error.DoesNotExist')
    STATE['adv'] = None
    STATE['adv_unregistrations'] += 1


def start_discovery(adapter):
    log_call('StartDiscovery', adapter.__dbus_object_path__)
    adapter.props[ADAPTER_IFACE]['Discovering'] = dbus.Boolean(True, variant_level=1)


def stop_discovery(adapter):
    log_call('StopDiscovery', adapter.__dbus_object_path__)
    adapter.props[ADAPTER_IFACE]['Discovering'] = dbus.Boolean(False, variant_level=1)


def set_discovery_filter(adapter, discovery_filter):
    log_call('SetDiscoveryFilter', adapter.__dbus_object_path__)
    adapter.discovery_filter = discovery_filter


def add_adapter(mock, name, powered):
    path = '/org/bluez/' + name
    props = {
        'Address': dbus.String('00:11:22:33:44:5' + name[-1], variant_level=1),
        'Name': dbus.String('mock', variant_level=1),
        'Powered': dbus.Boolean(powered, variant_level=1),
        'Discovering': dbus.Boolean(False, variant_level=1),
    }
    mock.AddObject(path, ADAPTER_IFACE, props, [
        ('StartDiscovery', '', '', start_discovery),
        ('StopDiscovery', '', '', stop_discovery),
        ('SetDiscoveryFilter', 'a{sv}', '', set_discovery_filter),
    ])
    adapter = mockobject.objects[path]
    adapter.props[GATT_MANAGER_IFACE] = {}
    adapter.props[ADV_MANAGER_IFACE] = {
        'ActiveInstances': dbus.Byte(0, variant_level=1),
        'SupportedInstances': dbus.Byte(5, variant_level=1),
        'SupportedIncludes': dbus.Array([], signature='s', variant_level=1),
    }
    mock.object_manager_emit_added(path)


def load(mock, parameters):
    STATE['powerable'] = parameters.get('powerable', True)
    names = parameters.get('adapters', ['hci0'])
    powered = parameters.get('powered', True)
    delay = int(parameters.get('adapter_delay_ms', 0))
    if delay <= 0:
        for name in names:
            add_adapter(mock, name, powered)
        return

    def later():
        for name in names:
            add_adapter(mock, name, powered)
        return False
    GLib.timeout_add(delay, later)


# --- reading back what the node registered ---

@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='a{oa{sa{sv}}}')
def AppObjects(self):
    '''The application's objects, read again now (empty when nothing is registered).'''
    if STATE['app'] is None:
        return dbus.Dictionary({}, signature='oa{sa{sv}}')
    sender, path = STATE['app']
    return bus().get_object(sender, path, introspect=False).GetManagedObjects(dbus_interface=OBJECT_MANAGER_IFACE)


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='a{sv}')
def Advertisement(self):
    '''The advertisement's properties at its latest registration, plus counters.'''
    result = dict(STATE['adv_props']) if STATE['adv'] is not None else {}
    result['registrations'] = dbus.UInt32(STATE['adv_registrations'], variant_level=1)
    result['unregistrations'] = dbus.UInt32(STATE['adv_unregistrations'], variant_level=1)
    return dbus.Dictionary(result, signature='sv')


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='s')
def AppOwner(self):
    '''The unique bus name that registered the application.'''
    return STATE['app'][0] if STATE['app'] else ''


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='as')
def CallLog(self):
    return dbus.Array(STATE['calls'], signature='s')


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='s')
def AppIntrospect(self, path):
    '''Our Introspect output for one of the application's objects.'''
    sender, _ = STATE['app']
    return bus().get_object(sender, path, introspect=False).Introspect(dbus_interface='org.freedesktop.DBus.Introspectable')


# --- a remote central against our GATT application (our peripheral role) ---

def app_characteristic(uuid):
    sender, _ = STATE['app']
    for path, ifaces in STATE['app_objects'].items():
        if CHAR_IFACE in ifaces and str(ifaces[CHAR_IFACE]['UUID']) == uuid:
            return bus().get_object(sender, path, introspect=False), str(path)
    raise dbus.exceptions.DBusException('no characteristic ' + uuid, name='org.bluez.Error.DoesNotExist')


@dbus.service.method(MOCK_IFACE, in_signature='oayq', out_signature='')
def CentralWrite(self, device, value, mtu):
    '''A central's write-without-response on 0002, as bluetoothd passes it on.'''
    char, _ = app_characteristic(INBOUND_UUID)
    options = dbus.Dictionary({'device': dbus.ObjectPath(device), 'mtu': dbus.UInt16(mtu), 'type': dbus.String('command')},
                              signature='sv')
    char.WriteValue(dbus.ByteArray(bytes(value)), options, dbus_interface=CHAR_IFACE)


def value_changed(interface, changed, _invalidated, path=None):
    if interface == CHAR_IFACE and 'Value' in changed:
        STATE['notifications'].append(('signal', bytes(changed['Value'])))


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='')
def CentralStartNotify(self):
    '''The first central subscribes: StartNotify, then Value changes are notifications.'''
    char, path = app_characteristic(OUTBOUND_UUID)
    sender, _ = STATE['app']
    bus().add_signal_receiver(value_changed, signal_name='PropertiesChanged', dbus_interface=PROPS_IFACE,
                              bus_name=sender, path=path, path_keyword='path')
    char.StartNotify(dbus_interface=CHAR_IFACE)


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='')
def CentralStopNotify(self):
    char, _ = app_characteristic(OUTBOUND_UUID)
    char.StopNotify(dbus_interface=CHAR_IFACE)


WATCHES = {}  # fd → GLib source id, removed before the fd is closed


def watch_socket(fd, on_message, on_hangup):
    def ready(source, condition):
        if condition & GLib.IO_IN:
            try:
                data = os.read(source, 1024)
            except OSError:
                data = b''
            if data:
                on_message(data)
                return True
        WATCHES.pop(source, None)
        on_hangup()
        return False
    WATCHES[fd] = GLib.io_add_watch(fd, GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, ready)


def close_socket(fd):
    source = WATCHES.pop(fd, None)
    if source is not None:
        GLib.source_remove(source)
    os.close(fd)


@dbus.service.method(MOCK_IFACE, in_signature='oq', out_signature='q')
def CentralAcquireNotify(self, device, mtu):
    '''AcquireNotify on 0003 with a central's options; returns the MTU our node answered.'''
    char, _ = app_characteristic(OUTBOUND_UUID)
    options = dbus.Dictionary({'device': dbus.ObjectPath(device), 'mtu': dbus.UInt16(mtu), 'link': dbus.String('LE')},
                              signature='sv')
    fd, answered = char.AcquireNotify(options, dbus_interface=CHAR_IFACE)
    fd = fd.take()
    STATE['central_fds'][str(device)] = fd
    watch_socket(fd, lambda data: STATE['notifications'].append(('fd', data)),
                 lambda: STATE['central_fds'].pop(str(device), None))
    return answered


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='')
def CentralReleaseNotify(self, device):
    '''bluetoothd closes the AcquireNotify socket when the subscriber goes.'''
    fd = STATE['central_fds'].pop(str(device), None)
    if fd is not None:
        close_socket(fd)


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='a(say)')
def Notifications(self):
    '''What the central heard from our node since the last call: ("signal"|"fd", frame).'''
    heard = [dbus.Struct((source, dbus.ByteArray(data)), signature='say') for source, data in STATE['notifications']]
    STATE['notifications'] = []
    return dbus.Array(heard, signature='(say)')


# --- a remote Burrow node for our central role ---

@dbus.service.method(MOCK_IFACE, in_signature='ssayqs', out_signature='o')
def AddNode(self, adapter, address, service_data, mtu, notify_mode):
    '''A remote node advertising `service_data` for the mesh service. notify_mode: "acquire"
    (AcquireNotify works) or "start" (AcquireNotify fails; StartNotify + Value changes).'''
    path = f'/org/bluez/{adapter}/dev_' + address.replace(':', '_').upper()
    props = {
        'Address': dbus.String(address, variant_level=1),
        'Adapter': dbus.ObjectPath('/org/bluez/' + adapter, variant_level=1),
        'Connected': dbus.Boolean(False, variant_level=1),
        'ServicesResolved': dbus.Boolean(False, variant_level=1),
        'ServiceData': dbus.Dictionary({SERVICE_UUID: dbus.ByteArray(bytes(service_data), variant_level=1)},
                                       signature='sv', variant_level=1),
        'RSSI': dbus.Int16(-50, variant_level=1),
    }
    STATE['nodes'][path] = {'mtu': int(mtu), 'mode': str(notify_mode), 'received': [], 'write_fd': None,
                            'notify_fd': None, 'gatt': False}
    self.AddObject(path, DEVICE_IFACE, props, [
        ('Connect', '', '', device_connect),
        ('Disconnect', '', '', device_disconnect),
    ])
    mockobject.objects['/'].object_manager_emit_added(path)
    return dbus.ObjectPath(path)


def device_connect(device):
    path = device.__dbus_object_path__
    log_call('Connect', path)
    node = STATE['nodes'][path]
    device.props[DEVICE_IFACE]['Connected'] = dbus.Boolean(True, variant_level=1)
    emit_changed(device, DEVICE_IFACE, {'Connected': dbus.Boolean(True, variant_level=1)})
    # Service discovery, then ServicesResolved, as bluetoothd does after a connection.
    GLib.idle_add(resolve_services, device)


def resolve_services(device):
    path = device.__dbus_object_path__
    node = STATE['nodes'][path]
    manager = mockobject.objects['/']
    if not node['gatt']:
        service = path + '/service0010'
        manager.AddObject(service, SERVICE_IFACE, {
            'UUID': dbus.String(SERVICE_UUID, variant_level=1),
            'Device': dbus.ObjectPath(path, variant_level=1),
            'Primary': dbus.Boolean(True, variant_level=1),
        }, [])
        manager.object_manager_emit_added(service)
        manager.AddObject(service + '/char0011', CHAR_IFACE, {
            'UUID': dbus.String(INBOUND_UUID, variant_level=1),
            'Service': dbus.ObjectPath(service, variant_level=1),
            'Flags': dbus.Array(['write-without-response'], signature='s', variant_level=1),
        }, [('AcquireWrite', 'a{sv}', 'hq', acquire_write)])
        manager.object_manager_emit_added(service + '/char0011')
        manager.AddObject(service + '/char0013', CHAR_IFACE, {
            'UUID': dbus.String(OUTBOUND_UUID, variant_level=1),
            'Service': dbus.ObjectPath(service, variant_level=1),
            'Flags': dbus.Array(['notify'], signature='s', variant_level=1),
            'Notifying': dbus.Boolean(False, variant_level=1),
            'Value': dbus.ByteArray(b'', variant_level=1),
        }, [('AcquireNotify', 'a{sv}', 'hq', acquire_notify),
            ('StartNotify', '', '', start_notify),
            ('StopNotify', '', '', '')])
        manager.object_manager_emit_added(service + '/char0013')
        node['gatt'] = True
    device.props[DEVICE_IFACE]['ServicesResolved'] = dbus.Boolean(True, variant_level=1)
    emit_changed(device, DEVICE_IFACE, {'ServicesResolved': dbus.Boolean(True, variant_level=1)})
    return False


def node_of(char):
    char_path = char.__dbus_object_path__
    device = char_path.rsplit('/', 2)[0]
    return device, STATE['nodes'][device]


def acquire_write(char, _options):
    device, node = node_of(char)
    log_call('AcquireWrite', char.__dbus_object_path__)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    node['write_fd'] = ours.detach()
    watch_socket(node['write_fd'], lambda data: node['received'].append(data), lambda: None)
    fd = dbus.types.UnixFd(theirs.fileno())
    theirs.close()
    return (fd, dbus.UInt16(node['mtu']))


def acquire_notify(char, _options):
    device, node = node_of(char)
    log_call('AcquireNotify', char.__dbus_object_path__)
    if node['mode'] != 'acquire':
        raise dbus.exceptions.DBusException('Operation is not supported', name='org.bluez.Error.NotSupported')
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    node['notify_fd'] = ours.detach()
    fd = dbus.types.UnixFd(theirs.fileno())
    theirs.close()
    return (fd, dbus.UInt16(node['mtu']))


def start_notify(char):
    log_call('StartNotify', char.__dbus_object_path__)
    char.props[CHAR_IFACE]['Notifying'] = dbus.Boolean(True, variant_level=1)


def close_node_sockets(node):
    for key in ('write_fd', 'notify_fd'):
        if node[key] is not None:
            close_socket(node[key])
            node[key] = None


def device_disconnect(device):
    log_call('Disconnect', device.__dbus_object_path__)
    drop(device)


def drop(device):
    node = STATE['nodes'][device.__dbus_object_path__]
    close_node_sockets(node)
    device.props[DEVICE_IFACE]['Connected'] = dbus.Boolean(False, variant_level=1)
    device.props[DEVICE_IFACE]['ServicesResolved'] = dbus.Boolean(False, variant_level=1)
    emit_changed(device, DEVICE_IFACE, {'ServicesResolved': dbus.Boolean(False, variant_level=1),
                                        'Connected': dbus.Boolean(False, variant_level=1)})


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='aay')
def ReceivedFromNode(self, device):
    '''Frames our node wrote to this remote node's 0002 (through the AcquireWrite socket).'''
    node = STATE['nodes'][str(device)]
    frames = [dbus.ByteArray(data) for data in node['received']]
    node['received'] = []
    return dbus.Array(frames, signature='ay')


@dbus.service.method(MOCK_IFACE, in_signature='oay', out_signature='')
def NotifyNode(self, device, value):
    '''The remote node notifies a frame on its 0003.'''
    node = STATE['nodes'][str(device)]
    if node['mode'] == 'acquire':
        os.write(node['notify_fd'], bytes(value))
    else:
        char = mockobject.objects[str(device) + '/service0010/char0013']
        emit_changed(char, CHAR_IFACE, {'Value': dbus.ByteArray(bytes(value), variant_level=1)})


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='')
def DropConnection(self, device):
    '''The radio link is lost: Connected false, sockets closed.'''
    drop(mockobject.objects[str(device)])


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='')
def HangUp(self, device):
    '''Only the sockets close (bluetoothd releases them before the Connected change).'''
    close_node_sockets(STATE['nodes'][str(device)])


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='a{sv}')
def DeviceProperties(self, device):
    return mockobject.objects[str(device)].props[DEVICE_IFACE]
