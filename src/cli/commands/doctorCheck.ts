/** One line of `maestro doctor` (doctor.ts, doctorData.ts). */
export interface DoctorCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}
