'''python-dbusmock template: the parts of GeoClue2 (org.freedesktop.GeoClue2) a client uses.

Run as `/usr/bin/python3 -m dbusmock --template geoclue_template.py -p '{"denied": false}'` on a
private bus (DBUS_SYSTEM_BUS_ADDRESS). Parameters: "denied" (default false; true: Start is
refused with AccessDenied, as GeoClue does when no agent allows the DesktopId or location
services are off); "location" ([latitude, longitude, accuracy]: a position known from the
start, stamped with the time of loading).

Like geoclue (its D-Bus interface files, org.freedesktop.GeoClue2.{Manager,Client,Location}.xml):
* the Manager on /org/freedesktop/GeoClue2/Manager hands out clients (GetClient, CreateClient);
* a client refuses Start until its DesktopId is set, then emits LocationUpdated(old, new) with a
  new Location object each time the position changes (at once on Start when one is known);
* a Location carries Latitude, Longitude, Accuracy, Altitude (-DBL_MAX when unknown), Speed and
  Heading (-1 when unknown), Description and Timestamp (tt: seconds, microseconds).

The test drives it through org.burrow.GeoClueMock on the Manager path: SetLocation moves the
position; Clients reads back each client's properties and the calls it made.
'''

import time

import dbus

from dbusmock import mockobject

BUS_NAME = 'org.freedesktop.GeoClue2'
MAIN_OBJ = '/org/freedesktop/GeoClue2/Manager'
MAIN_IFACE = 'org.freedesktop.GeoClue2.Manager'
SYSTEM_BUS = True

CLIENT_IFACE = 'org.freedesktop.GeoClue2.Client'
LOCATION_IFACE = 'org.freedesktop.GeoClue2.Location'
MOCK_IFACE = 'org.burrow.GeoClueMock'
ACCESS_DENIED = 'org.freedesktop.DBus.Error.AccessDenied'

STATE = {
    'denied': False,
    'clients': [],       # client paths, in creation order
    'calls': {},         # client path -> ["Start", "Stop", ...]
    'location': None,    # path of the current Location object
    'locations': 0,
}


def load(mock, parameters):
    STATE['denied'] = bool(parameters.get('denied', False))
    mock.AddProperties(MAIN_IFACE, {
        'InUse': dbus.Boolean(False, variant_level=1),
        'AvailableAccuracyLevel': dbus.UInt32(8, variant_level=1),
    })
    mock.AddMethods(MAIN_IFACE, [
        ('GetClient', '', 'o', 'ret = self.new_client()'),
        ('CreateClient', '', 'o', 'ret = self.new_client()'),
    ])
    if 'location' in parameters:
        latitude, longitude, accuracy = parameters['location']
        add_location(mock, latitude, longitude, accuracy, -1.7976931348623157e308, -1.0, int(time.time()))
    # The name is ours by now (dbusmock takes it before loading the template): tests wait for this.
    print('geoclue mock ready', flush=True)


def new_client(self):
    path = '/org/freedesktop/GeoClue2/Client/%d' % (len(STATE['clients']) + 1)
    self.AddObject(path, CLIENT_IFACE, {
        'Location': dbus.ObjectPath('/', variant_level=1),
        'DistanceThreshold': dbus.UInt32(0, variant_level=1),
        'TimeThreshold': dbus.UInt32(0, variant_level=1),
        'DesktopId': dbus.String('', variant_level=1),
        'RequestedAccuracyLevel': dbus.UInt32(0, variant_level=1),
        'Active': dbus.Boolean(False, variant_level=1),
    }, [
        ('Start', '', '', 'self.start_client()'),
        ('Stop', '', '', 'self.stop_client()'),
    ])
    STATE['clients'].append(path)
    STATE['calls'][path] = []
    client = mockobject.objects[path]
    client.start_client = lambda: start_client(client)
    client.stop_client = lambda: stop_client(client)
    return dbus.ObjectPath(path)


mockobject.DBusMockObject.new_client = new_client


def start_client(client):
    path = client.__dbus_object_path__
    STATE['calls'][path].append('Start')
    if not client.Get(CLIENT_IFACE, 'DesktopId'):
        raise dbus.exceptions.DBusException("'DesktopId' property must be set", name=ACCESS_DENIED)
    if STATE['denied']:
        raise dbus.exceptions.DBusException("'burrow' disallowed, no agent for UID %d" % 1000, name=ACCESS_DENIED)
    client.Set(CLIENT_IFACE, 'Active', dbus.Boolean(True))
    if STATE['location'] is not None:
        update(client, STATE['location'])


def stop_client(client):
    STATE['calls'][client.__dbus_object_path__].append('Stop')
    client.Set(CLIENT_IFACE, 'Active', dbus.Boolean(False))


def update(client, location):
    old = client.Get(CLIENT_IFACE, 'Location')
    client.Set(CLIENT_IFACE, 'Location', dbus.ObjectPath(location))
    client.EmitSignal(CLIENT_IFACE, 'LocationUpdated', 'oo', [old, dbus.ObjectPath(location)])


@dbus.service.method(MOCK_IFACE, in_signature='dddddt', out_signature='o')
def SetLocation(self, latitude, longitude, accuracy, altitude, speed, seconds):
    '''A new position: a new Location object, announced to every active client.'''
    return add_location(self, latitude, longitude, accuracy, altitude, speed, seconds)


def add_location(self, latitude, longitude, accuracy, altitude, speed, seconds):
    STATE['locations'] += 1
    path = '/org/freedesktop/GeoClue2/Location/%d' % STATE['locations']
    self.AddObject(path, LOCATION_IFACE, {
        'Latitude': dbus.Double(latitude, variant_level=1),
        'Longitude': dbus.Double(longitude, variant_level=1),
        'Accuracy': dbus.Double(accuracy, variant_level=1),
        'Altitude': dbus.Double(altitude, variant_level=1),
        'Speed': dbus.Double(speed, variant_level=1),
        'Heading': dbus.Double(-1.0, variant_level=1),
        'Description': dbus.String('', variant_level=1),
        'Timestamp': dbus.Struct((dbus.UInt64(seconds), dbus.UInt64(0)), signature='tt', variant_level=1),
    }, [])
    STATE['location'] = path
    for client_path in STATE['clients']:
        client = mockobject.objects[client_path]
        if client.Get(CLIENT_IFACE, 'Active'):
            update(client, path)
    return dbus.ObjectPath(path)


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='aa{sv}')
def Clients(self):
    '''Each client's DesktopId, RequestedAccuracyLevel, Active and the calls it made.'''
    result = []
    for path in STATE['clients']:
        client = mockobject.objects[path]
        result.append({
            'Path': dbus.ObjectPath(path, variant_level=1),
            'DesktopId': dbus.String(client.Get(CLIENT_IFACE, 'DesktopId'), variant_level=1),
            'RequestedAccuracyLevel': dbus.UInt32(client.Get(CLIENT_IFACE, 'RequestedAccuracyLevel'), variant_level=1),
            'Active': dbus.Boolean(client.Get(CLIENT_IFACE, 'Active'), variant_level=1),
            'Calls': dbus.Array(STATE['calls'][path], signature='s', variant_level=1),
        })
    return dbus.Array(result, signature='a{sv}')

